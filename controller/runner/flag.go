package runner

import (
	"flag"
	"fmt"
	"strings"
)

// ControllersValue is a flag.Value for an enable list, as kube-controller-manager's
// --controllers: comma-separated, the first use of the flag replaces the default and later
// uses append; every element is checked against the known controllers when it is set.
type ControllersValue struct {
	list    *[]string
	descs   []Descriptor
	changed bool
}

// NewControllersValue returns a flag.Value writing to *list (whose value is the default)
// that accepts the names of descs.
func NewControllersValue(list *[]string, descs []Descriptor) *ControllersValue {
	if list == nil {
		panic("runner: NewControllersValue needs a list")
	}
	return &ControllersValue{list: list, descs: descs}
}

// String returns the list, comma-separated.
func (v *ControllersValue) String() string {
	if v == nil || v.list == nil {
		return ""
	}
	return strings.Join(*v.list, ",")
}

// Set parses a comma-separated list; an unknown name is an error wrapping
// ErrUnknownController.
func (v *ControllersValue) Set(s string) error {
	var items []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	if err := ValidateControllers(items, v.descs); err != nil {
		return err
	}
	if !v.changed {
		*v.list = nil
		v.changed = true
	}
	*v.list = append(*v.list, items...)
	return nil
}

// ControllersVar defines a --controllers flag on fs writing to *list, whose help lists the
// known controllers and those disabled by default. If *list is nil it defaults to ["*"].
func ControllersVar(fs *flag.FlagSet, list *[]string, descs []Descriptor) {
	if *list == nil {
		*list = []string{"*"}
	}
	var off []string
	for _, d := range descs {
		if d.DisabledByDefault {
			off = append(off, d.Name)
		}
	}
	if len(off) == 0 {
		off = []string{"none"}
	}
	usage := fmt.Sprintf("Comma-separated controllers to enable: '*' enables every controller that is on by default, "+
		"'foo' enables the controller foo, '-foo' disables it.\nKnown controllers: %s\nOff by default: %s",
		strings.Join(names(descs), ", "), strings.Join(off, ", "))
	fs.Var(NewControllersValue(list, descs), "controllers", usage)
}
