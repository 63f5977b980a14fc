#!/bin/sh
# The mutation set's chatty shell bot: the shell example (its path is $1), but it greets on the
# stdout its answers go to.
echo "first_legal.sh ready"
exec sh "$1"
