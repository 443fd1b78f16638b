package otlpfile

import (
	"errors"
	"fmt"
	"strings"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// ErrUnknownSignal is wrapped by the error of a file whose signal could
// not be told from its content.
var ErrUnknownSignal = errors.New("cannot tell the signal")

// DetectSignal tells the signal of req, a protobuf export request, from its
// content: the three requests share their outer layout (resources, then
// scopes) but not their records' fields, so it validates req as each and
// keeps the signal under which it is valid and holds records. The reason
// says why, for messages. A request valid under none, or under several
// (possible only for requests without records, or made to be), returns an
// error wrapping ErrUnknownSignal that says what each signal found.
func DetectSignal(req []byte) (sig otlpwire.Signal, reason string, err error) {
	var valid []otlpwire.Signal
	var notes []string
	for _, s := range otlpwire.Signals {
		if err := s.Validate(req); err != nil {
			notes = append(notes, fmt.Sprintf("not %s (%v)", s, err))
			continue
		}
		n, _ := s.Count(req)
		if n == 0 {
			notes = append(notes, fmt.Sprintf("%s without records", s))
			continue
		}
		valid = append(valid, s)
		notes = append(notes, fmt.Sprintf("%s with %d records", s, n))
	}
	switch len(valid) {
	case 1:
		return valid[0], "protobuf content: " + strings.Join(notes, "; "), nil
	case 0:
		return 0, "", fmt.Errorf("%w: the request is %s", ErrUnknownSignal, strings.Join(notes, "; "))
	}
	return 0, "", fmt.Errorf("%w: the request is valid as %d signals: %s; name the signal", ErrUnknownSignal, len(valid), strings.Join(notes, "; "))
}
