"""Between the wire and the core: protobuf messages of ``cancellation_hearts.v1`` to and from core objects.

:mod:`hearts_protocol.convert` is the one place where a protobuf enum or message is mapped to a
:mod:`hearts_core` value; the referee (building what it sends) and the SDK (reading what it
receives) both use it. :mod:`hearts_protocol.values` holds what the protocol speaks of as plain
values (a seat's answer, the rejection codes, fault kinds, a table's status): what the referee's
table is handed instead of protobuf messages.
"""
