package apiclient

import (
	"io"

	"github.com/informerkit/informerkit/internal/jsondec"
	"github.com/informerkit/informerkit/meta"
)

// EventDecoder reads the watch events of a JSON stream, the body of a chunked watch
// response: {"type":...,"object":{...}} objects one after the other (newlines optional).
// It is what every chunked watch runs; it is exported for tools and benchmarks that replay
// recorded streams. It holds one event in memory at a time (at most maxEventSize bytes).
type EventDecoder[T any] struct {
	fr   *frameReader
	kind string
	dec  *objectDecoder
}

// NewEventDecoder returns a decoder of the events in r. maxEventSize 0 means
// DefaultMaxEventSize; kind, if not "", is the kind every object must have.
func NewEventDecoder[T any](r io.Reader, maxEventSize int, kind string) *EventDecoder[T] {
	if maxEventSize <= 0 {
		maxEventSize = DefaultMaxEventSize
	}
	return &EventDecoder[T]{fr: newFrameReader(r, maxEventSize), kind: kind, dec: &objectDecoder{dec: jsondec.NewDecoder(jsondec.Options{})}}
}

// Next returns the next event. It returns io.EOF when the stream ends between events,
// io.ErrUnexpectedEOF when it ends inside one, a *DecodeError for a stream that cannot be
// decoded, and the reader's error otherwise. An ERROR event is returned as an event
// (Type Error, Err the server's *Status), not as an error.
func (d *EventDecoder[T]) Next() (Event[T], error) {
	frame, err := d.fr.next()
	if err != nil {
		return Event[T]{}, err
	}
	return decodeEvent[T](d.dec, frame, d.kind, d.fr.offset(len(frame)))
}

// DecodeList decodes the body of a LIST response as Resource.List does.
func DecodeList[T any](data []byte) (*meta.List[T], error) {
	return decodeObject[*meta.List[T]](decoding{}, response{body: data, contentType: mediaJSON})
}
