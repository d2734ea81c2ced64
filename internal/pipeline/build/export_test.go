package build

// CheckMainModule is checkMainModule, for the tests of package build_test.
var CheckMainModule = checkMainModule
