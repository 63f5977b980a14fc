#!/bin/sh
# The mutation set's shell bot that ignores rejected lines (first_legal.sh as it once was).
# A Cancellation Hearts bot in plain POSIX sh: no gRPC, no JSON library, no other program.
# It speaks the stdin/stdout protocol (docs/PROTOCOL.md, "stdin/stdout bots"): one JSON line
# in per message, one JSON line out per "decide". It plays the first legal card, passes the
# three last cards of its hand (the highest of its highest suit) and takes -26 on a moon shot.
# Every other line (events, rejections) is ignored. Enter it with protocol = "stdio".
set -f  # no globbing of card codes
while IFS= read -r line; do
    case $line in
        '{"type":"decide"'*) ;;
        *) continue ;;
    esac
    id=${line#*\"id\":}
    id=${id%%,*}
    case $line in
        *'"kind":"play"'*)
            card=${line#*\"legal\":[\"}
            card=${card%%\"*}
            printf '{"id":%s,"play":"%s"}\n' "$id" "$card"
            ;;
        *'"kind":"pass"'*)
            hand=${line#*\"hand\":[}
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
