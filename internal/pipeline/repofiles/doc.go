// Package repofiles keeps build output out of the repository.
//
// A 20 MB build of the CLI was once committed at the root; nothing noticed,
// because nothing looked. Check reads what git tracks (not the working tree:
// an ignored _output/ may hold anything) and refuses an executable binary, a
// file with the executable bit that is not a script, or a file larger than
// MaxSize, unless the file is named in Fixtures with the reason it is there.
// Its test runs Check on this repository, so `make test` fails the moment such
// a file is added.
package repofiles
