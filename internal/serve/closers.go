package serve

import (
	"errors"
	"fmt"
)

// closers is a stack of what New opened: each component, once open,
// pushes how to close it, and close closes them last opened first. An
// error path of New closes the stack, so nothing it opened stays open (a
// TSDB or spool lock included); Shutdown closes it after the receiver
// and the admin server drained.
type closers struct {
	names []string
	fns   []func() error
}

// push adds what closes the component name.
func (c *closers) push(name string, close func() error) {
	c.names = append(c.names, name)
	c.fns = append(c.fns, close)
}

// close closes every component pushed, last first, and empties the
// stack; it returns their errors joined, each naming its component.
func (c *closers) close() error {
	var errs []error
	for i := len(c.fns) - 1; i >= 0; i-- {
		if err := c.fns[i](); err != nil {
			errs = append(errs, fmt.Errorf("close %s: %w", c.names[i], err))
		}
	}
	c.names, c.fns = nil, nil
	return errors.Join(errs...)
}
