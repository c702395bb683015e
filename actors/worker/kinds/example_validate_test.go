package kinds_test

import (
	"encoding/json"
	"fmt"

	"github.com/cronactor/cronactor/actors/worker/kinds"
)

func ExampleCheckHTTPPayload() {
	for _, p := range []string{`{"url":"https://example.com/hook"}`, `{"url":"/hook"}`, `{"body":1}`} {
		fmt.Println(kinds.CheckHTTPPayload(json.RawMessage(p)))
	}
	// Output:
	// <nil>
	// rules: payload.url: must be an absolute http or https URL, got "/hook"
	// rules: payload.url: is required: an http task's payload is {"url": "https://…", "body": …}
}
