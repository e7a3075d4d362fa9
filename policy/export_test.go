package policy

import "slices"

// RegisterSectionForTest registers a section for one test and returns how to take it back out
// (the registry is process-wide).
func RegisterSectionForTest(name string, order int, new func() Section) (restore func()) {
	kinds, schemes := slices.Clone(sectionKinds), slices.Clone(Schemes)
	RegisterSection(name, order, new)
	return func() { sectionKinds, Schemes = kinds, schemes }
}
