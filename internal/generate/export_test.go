package generate

// PlanEnv is planEnv, for the external tests (wizard_schemes_test.go).
var PlanEnv = planEnv
