package meta

import (
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a time.Duration that a custom resource holds as a string ("90s", "1h30m"),
// as metav1.Duration: a grace period, an interval. cmd/crdgen writes its schema (a string).
type Duration struct {
	time.Duration
}

// MarshalJSON writes the duration as time.Duration.String does.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.Duration.String()) }

// UnmarshalJSON reads a string that time.ParseDuration accepts; null leaves d unchanged.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("meta: a Duration is a string such as \"90s\": %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("meta: Duration: %w", err)
	}
	d.Duration = v
	return nil
}
