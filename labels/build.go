package labels

import (
	"errors"
	"slices"
	"strconv"
)

// Nothing returns the selector that matches no object: a nil meta.LabelSelector's. Its
// String is "", as apimachinery's: a server reading it would select everything, so it is
// for matching in the program, never for a list or a watch.
func Nothing() Selector { return Selector{nothing: true} }

// NewRequirement returns the requirement of key, op and values, checked as Parse checks the
// requirements it reads (apimachinery's labels.NewRequirement): a valid key; one value for
// Equals and NotEquals, one integer for GreaterThan and LessThan, at least one for In and
// NotIn (sorted and deduplicated), none for Exists and DoesNotExist; valid values.
func NewRequirement(key string, op Operator, values []string) (Requirement, error) {
	if err := ValidateKey(key); err != nil {
		return Requirement{}, err
	}
	switch op {
	case In, NotIn:
		if len(values) == 0 {
			return Requirement{}, errors.New("for 'in', 'notin' operators, values set can't be empty")
		}
		values = slices.Compact(slices.Sorted(slices.Values(values)))
	case Equals, NotEquals:
		if len(values) != 1 {
			return Requirement{}, errors.New("exact-match compatibility requires one single value")
		}
	case Exists, DoesNotExist:
		if len(values) != 0 {
			return Requirement{}, errors.New("values set must be empty for exists and does not exist")
		}
		values = nil
	case GreaterThan, LessThan:
		if len(values) != 1 {
			return Requirement{}, errors.New("for 'Gt', 'Lt' operators, exactly one value is required")
		}
		if _, err := strconv.ParseInt(values[0], 10, 64); err != nil {
			return Requirement{}, errors.New("for 'Gt', 'Lt' operators, the value must be an integer")
		}
	default:
		return Requirement{}, errors.New("operator '" + string(op) + "' is not recognized")
	}
	for _, v := range values {
		if err := ValidateValue(v); err != nil {
			return Requirement{}, err
		}
	}
	return Requirement{Key: key, Operator: op, Values: slices.Clone(values)}, nil
}

// NewSelector returns the conjunction of reqs (made by NewRequirement), sorted by key as
// Parse sorts them; no requirements select everything.
func NewSelector(reqs ...Requirement) Selector {
	s := Selector{reqs: slices.Clone(reqs)}
	s.sort()
	return s
}
