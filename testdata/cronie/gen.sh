#!/bin/sh
# gen.sh rebuilds table.txt from cronie's source:
#   CRONIE_GIT=/path/to/cronie/.git ./gen.sh
# It extracts cronie's field parser from src/entry.c at COMMIT (the lines
# named below), compiles harness.c against it and runs it on exprs.txt.
# CI does not run this; table.txt is committed.
set -eu
COMMIT=5f9f16b5663becefdd0dd70df31c0ef5ac36f943
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git --git-dir="$CRONIE_GIT" show "$COMMIT:src/bitstring.h" >"$tmp/bitstring.h"
{
	# range_state_t and the prototypes, then get_list .. set_element
	git --git-dir="$CRONIE_GIT" show "$COMMIT:src/entry.c" | sed -n '65,81p'
	git --git-dir="$CRONIE_GIT" show "$COMMIT:src/entry.c" | sed -n '492,751p'
} >"$tmp/entry_extract.c"
cp harness.c "$tmp/"
gcc -O2 -w -o "$tmp/harness" "$tmp/harness.c" -I"$tmp"
{
	echo "# cronie's answers: the first firing minutes from 2026-01-01T00:00Z (UTC)"
	echo "# of each expression, or \"error\" when cronie refuses it, or \"never\"."
	echo "# Made by testdata/cronie/gen.sh (harness.c compiled with cronie's parser"
	echo "# from src/entry.c and the match rule of src/cron.c) at cronie commit"
	echo "# $COMMIT. Format: expression TAB times."
	"$tmp/harness" <exprs.txt
} >table.txt
