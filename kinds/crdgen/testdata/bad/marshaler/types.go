package marshaler

import "github.com/informerkit/informerkit/meta"

// Holder has a field of a type with its own JSON form and no marker.
//
// +kind:group=bad.informerkit.io,version=v1
type Holder struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Value           Opaque    `json:"value"`
	Described       Described `json:"described"`
}

// Opaque writes itself.
type Opaque struct{ v int }

// MarshalJSON writes a number.
func (o Opaque) MarshalJSON() ([]byte, error) { return []byte("1"), nil }

// Described writes itself, and says how.
// +type=string
// +format=duration
type Described struct{ v int }

// MarshalJSON writes a string.
func (d Described) MarshalJSON() ([]byte, error) { return []byte(`"1s"`), nil }
