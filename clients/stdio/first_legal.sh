#!/bin/sh
# A Cancellation Hearts bot in plain POSIX sh: no gRPC, no JSON library, no other program.
# It speaks the stdin/stdout protocol (docs/PROTOCOL.md, "stdin/stdout bots"): one JSON line
# in per message, one JSON line out per "decide" (and per "rejected" line with time left: it
# answers the same request again). It plays the first legal card, passes the three last cards
# of its hand (the highest of its highest suit) and takes -26 on a moon shot. Every other line
# (events) is ignored. Enter it with protocol = "stdio".
set -f  # no globbing of card codes
request=
while IFS= read -r line; do
    case $line in
        '{"type":"decide"'*) request=$line ;;
        '{"type":"rejected"'*'"time_left_ms":0}'*) continue ;;
        '{"type":"rejected"'*) [ -n "$request" ] || continue ;;
        *) continue ;;
    esac
    id=${request#*\"id\":}
    id=${id%%,*}
    case $request in
        *'"kind":"play"'*)
            card=${request#*\"legal\":[\"}
            card=${card%%\"*}
            printf '{"id":%s,"play":"%s"}\n' "$id" "$card"
            ;;
        *'"kind":"pass"'*)
            hand=${request#*\"hand\":[}
            hand=${hand%%]*}
            IFS=,
            set -- $hand
            unset IFS
            shift $(($# - 3))
            printf '{"id":%s,"pass":[%s,%s,%s]}\n' "$id" "$1" "$2" "$3"
            ;;
        *)
            printf '{"id":%s,"moon":"self_minus_26"}\n' "$id"
            ;;
    esac
done
