package meta

import (
	"encoding/json"
	"fmt"
	"testing"
)

// The answers kube-apiservers have given to a request for a resourceVersion newer than they
// have seen, as they put them on the wire, and a few look-alikes that are something else.
func TestIsTooLargeResourceVersionRecognisesEveryServerVersion(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		want bool
	}{
		{"1.18.6 and later", `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Too large resource version: 1200, current: 1100","reason":"Timeout","details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],"retryAfterSeconds":1},"code":504}`, true},
		{"1.17.0 to 1.18.5", `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Too large resource version: 1200, current: 1100","reason":"Timeout","details":{"causes":[{"message":"Too large resource version"}],"retryAfterSeconds":1},"code":504}`, true},
		{"before 1.17", `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Too large resource version: 1200, current: 1100","reason":"Timeout","details":{"retryAfterSeconds":1},"code":504}`, true},
		{"before 1.17, no details", `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Too large resource version: 1200, current: 1100","reason":"Timeout","code":504}`, true},
		{"cause on another code", `{"kind":"Status","status":"Failure","message":"x","reason":"InternalError","details":{"causes":[{"reason":"ResourceVersionTooLarge"}]},"code":500}`, true},
		{"message on a 500", `{"kind":"Status","status":"Failure","message":"Too large resource version: 1200, current: 1100","reason":"InternalError","code":500}`, false},
		{"cause message on a 500", `{"kind":"Status","status":"Failure","message":"x","reason":"InternalError","details":{"causes":[{"message":"Too large resource version"}]},"code":500}`, false},
		{"other timeout", `{"kind":"Status","status":"Failure","message":"Timeout: request did not complete within 60s","reason":"Timeout","details":{"retryAfterSeconds":1},"code":504}`, false},
		{"expired", `{"kind":"Status","status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &Status{}
			if err := json.Unmarshal([]byte(tc.body), st); err != nil {
				t.Fatal(err)
			}
			err := fmt.Errorf("list: %w", st)
			if got := IsTooLargeResourceVersion(err); got != tc.want {
				t.Fatalf("IsTooLargeResourceVersion = %v, want %v", got, tc.want)
			}
		})
	}
	if IsTooLargeResourceVersion(fmt.Errorf("Too large resource version")) {
		t.Fatal("a plain error (no Status) recognised")
	}
}
