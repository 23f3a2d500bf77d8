package leaderelection

import (
	"fmt"
	"time"

	"github.com/informerkit/informerkit/meta"
)

// LeaseGVR is the resource of coordination.k8s.io/v1 Leases.
var LeaseGVR = meta.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// LeaseVerbs are the API verbs an Elector uses on Leases in its namespace: it reads, creates
// and renews its Lease, and a candidate watches it to take over the moment it is released.
// A role without watch leaves hand-off to polling at RetryPeriod.
var LeaseVerbs = []string{"get", "watch", "create", "update"}

// Lease is a coordination.k8s.io/v1 Lease: the object leader election writes. Only the
// fields it reads and writes are declared.
type Lease struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            LeaseSpec `json:"spec"`
}

// LeaseSpec is the spec of a Lease. Optional fields are pointers so that a Lease written by
// another client round-trips unchanged.
type LeaseSpec struct {
	// HolderIdentity is the identity of the current holder; "" or absent means nobody.
	HolderIdentity *string `json:"holderIdentity,omitempty"`
	// LeaseDurationSeconds is how long candidates wait, from the moment they observe the last
	// change of the Lease, before they consider it expired.
	LeaseDurationSeconds *int32 `json:"leaseDurationSeconds,omitempty"`
	// AcquireTime is when the current holder acquired the Lease.
	AcquireTime *MicroTime `json:"acquireTime,omitempty"`
	// RenewTime is when the holder last renewed it. Informational: expiry is judged on the
	// candidates' own clocks, never from this timestamp.
	RenewTime *MicroTime `json:"renewTime,omitempty"`
	// LeaseTransitions counts changes of holder.
	LeaseTransitions *int32 `json:"leaseTransitions,omitempty"`
	// Strategy and PreferredHolder belong to coordinated leader election; they are kept as
	// read and otherwise ignored.
	Strategy        *string `json:"strategy,omitempty"`
	PreferredHolder *string `json:"preferredHolder,omitempty"`
}

// Holder returns HolderIdentity, "" if unset.
func (s LeaseSpec) Holder() string {
	if s.HolderIdentity == nil {
		return ""
	}
	return *s.HolderIdentity
}

// Transitions returns LeaseTransitions, 0 if unset.
func (s LeaseSpec) Transitions() int32 {
	if s.LeaseTransitions == nil {
		return 0
	}
	return *s.LeaseTransitions
}

// Duration returns LeaseDurationSeconds as a duration, 0 if unset.
func (s LeaseSpec) Duration() time.Duration {
	if s.LeaseDurationSeconds == nil {
		return 0
	}
	return time.Duration(*s.LeaseDurationSeconds) * time.Second
}

// record is the part of a Lease whose change candidates observe.
type record struct {
	holder      string
	duration    int32
	acquire     time.Time
	renew       time.Time
	transitions int32
}

func recordOf(s LeaseSpec) record {
	r := record{holder: s.Holder(), transitions: s.Transitions()}
	if s.LeaseDurationSeconds != nil {
		r.duration = *s.LeaseDurationSeconds
	}
	if s.AcquireTime != nil {
		r.acquire = s.AcquireTime.Time
	}
	if s.RenewTime != nil {
		r.renew = s.RenewTime.Time
	}
	return r
}

func (r record) equal(o record) bool {
	return r.holder == o.holder && r.duration == o.duration && r.transitions == o.transitions &&
		r.acquire.Equal(o.acquire) && r.renew.Equal(o.renew)
}

// MicroTime is a timestamp with microsecond precision as the API writes it in Leases
// (RFC 3339 with six fractional digits, UTC).
type MicroTime struct {
	time.Time
}

// microLayout is the API's MicroTime layout.
const microLayout = "2006-01-02T15:04:05.000000Z07:00"

// NewMicroTime returns t truncated to microseconds.
func NewMicroTime(t time.Time) *MicroTime { return &MicroTime{t.Truncate(time.Microsecond)} }

// MarshalJSON writes the time in the API's layout, or null for the zero time.
func (t MicroTime) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	b := make([]byte, 0, len(microLayout)+2)
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, microLayout)
	return append(b, '"'), nil
}

// UnmarshalJSON accepts null or an RFC 3339 time with any number of fractional digits.
func (t *MicroTime) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		t.Time = time.Time{}
		return nil
	}
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return fmt.Errorf("leaderelection: time %s is not a JSON string", b)
	}
	v, err := time.Parse(time.RFC3339Nano, string(b[1:len(b)-1]))
	if err != nil {
		return fmt.Errorf("leaderelection: time: %w", err)
	}
	t.Time = v
	return nil
}
