# JSON lines <-> records for the seqio tests, through tfr-cat.  The
# vectors write a feature as a plain list ([] included) or a scalar;
# tfr-cat wants a kind for an empty list and lists for scalars.
to_records() {
	jq -c 'map_values(if type == "array" then
	    (if length == 0 then {"int64_list": []} else . end)
	    elif type == "object" then . else [.] end)' | tfr-cat --from-json -R
}
# Records -> one flat object per line, keys sorted, empty lists as [].
to_json() {
	tfr-cat --flat "$@" | jq -S -c 'map_values(if type == "object" then
	    (.int64_list // .float_list // .bytes_list // []) else . end)'
}
