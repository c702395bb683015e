package events

// DecodeWithEncodingJSON decodes a body of type typ at its current schema
// with encoding/json only, as Decode did before its fast path: the
// reference the fast path is held to.
func DecodeWithEncodingJSON(typ string, body []byte) (Event, error) {
	reg := Default.byName[typ]
	ev, err := decodeJSON(reg, typ, reg.schema, body)
	if err != nil {
		return nil, err
	}
	if c, ok := ev.(checker); ok {
		if err := c.check(); err != nil {
			return nil, err
		}
	}
	return ev, nil
}
