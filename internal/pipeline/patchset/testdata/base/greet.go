package greet

import "fmt"

// Hello greets name.
func Hello(name string) string {
	return fmt.Sprintf("hello %s", name)
}

// Bye says goodbye.
func Bye(name string) string {
	return fmt.Sprintf("bye %s", name)
}

// unchanged filler so that the two hunks stay apart
func filler1() {}
func filler2() {}
func filler3() {}
func filler4() {}

// Shout greets name loudly.
func Shout(name string) string {
	return fmt.Sprintf("HELLO %s", name)
}
