package helper

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// warmSpec names every field of Spec, each with a value that is not its zero (Probe excepted: a
// warm helper must not decode itself into a probe), so that the warm-up builds every field's
// decoder; a field added to Spec and not to warmSpec turns this red.
func TestWarmSpecHoldsEveryField(t *testing.T) {
	var s Spec
	d := json.NewDecoder(bytes.NewReader(warmSpec))
	d.DisallowUnknownFields()
	if err := d.Decode(&s); err != nil {
		t.Fatalf("warmSpec does not decode as a Spec: %v", err)
	}
	v := reflect.ValueOf(s)
	for i := 0; i < v.NumField(); i++ {
		if f := v.Type().Field(i); f.Name != "Probe" && v.Field(i).IsZero() {
			t.Errorf("warmSpec leaves Spec.%s at its zero value: its decoder is built at the call", f.Name)
		}
	}
}
