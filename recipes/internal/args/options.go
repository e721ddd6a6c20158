package args

import (
	"fmt"
	"reflect"
)

// Apply applies opts to o in order: the one loop of every recipe's constructor. A
// nil option is refused ("nil Option (option 2 of 3)", named by the recipe's option
// type), and so is an option that refuses its own value: Apply returns that
// option's error as it is, whose message names the option ("Depth: -1 is
// negative"), and applies no option after it. The caller wraps the error in its own
// ErrInvalid, as it does Check's.
//
// F is the recipe's Option type, a func(*options) error: the shape of every Option
// of the module, the framework's included, so that an option can refuse a bad value
// at the constructor that received it.
func Apply[O any, F ~func(*O) error](o *O, opts []F) error {
	for i, opt := range opts {
		if opt == nil {
			return fmt.Errorf("nil %s (option %d of %d)", optionName[F](), i+1, len(opts))
		}
		if err := opt(o); err != nil {
			return err
		}
	}
	return nil
}

// optionName is what the recipe calls its option type: Option, ProviderOption.
func optionName[F any]() string {
	if name := reflect.TypeFor[F]().Name(); name != "" {
		return name
	}
	return "option"
}
