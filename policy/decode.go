package policy

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
)

// The policy file's shape is Policy's own keys plus one [table] per registered section. The
// sections belong to the schemes (each registers its own type), so the shape is a struct type
// made at run time: the TOML decoder then sees exactly the struct it would see if every
// section were a field of Policy, and reports unknown keys (MetaData.Undecoded) and defined
// ones (IsDefined) the same way.

// shapeType is the file's struct type: Policy's exported keys, then each section's table.
func shapeType() reflect.Type {
	var fields []reflect.StructField
	pt := reflect.TypeOf(Policy{})
	for i := range pt.NumField() {
		f := pt.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("toml"), ","); f.IsExported() && name != "-" {
			fields = append(fields, reflect.StructField{Name: f.Name, Type: f.Type, Tag: f.Tag})
		}
	}
	for i, k := range sectionKinds {
		fields = append(fields, reflect.StructField{
			Name: fmt.Sprintf("Section%d", i),
			Type: reflect.TypeOf(k.new()).Elem(),
			Tag:  reflect.StructTag(fmt.Sprintf("toml:%q", k.name)),
		})
	}
	return reflect.StructOf(fields)
}

// decodeTOML decodes text into p: what the file writes replaces p's values, key by key, and
// what it leaves out keeps p's (the defaults Parse starts from).
func (p *Policy) decodeTOML(text string) (toml.MetaData, error) {
	shape := reflect.New(shapeType()).Elem()
	pv := reflect.ValueOf(p).Elem()
	common := shape.NumField() - len(sectionKinds)
	for i := range common {
		shape.Field(i).Set(pv.FieldByName(shape.Type().Field(i).Name))
	}
	for i, k := range sectionKinds {
		shape.Field(common + i).Set(reflect.ValueOf(p.SectionFor(k.name)).Elem())
	}
	md, err := toml.Decode(text, shape.Addr().Interface())
	for i := range common {
		pv.FieldByName(shape.Type().Field(i).Name).Set(shape.Field(i))
	}
	for i, k := range sectionKinds {
		reflect.ValueOf(p.SectionFor(k.name)).Elem().Set(shape.Field(common + i))
	}
	return md, err
}
