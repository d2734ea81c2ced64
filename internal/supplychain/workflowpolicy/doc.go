// Package workflowpolicy checks this repository's GitHub Actions setup
// against the file-based checks of OpenSSF Scorecard, so that a change which
// would lower the score fails `make test` rather than a later scan.
//
// The rules, each a Scorecard check:
//   - Pinned-Dependencies: every action (and reusable workflow) named by a
//     full 40-hex commit SHA, with its release tag in the line's comment
//     ("@<sha> # v4.4.0"), so that a reader and Dependabot see the version and
//     a moved tag cannot change what runs; a docker:// action by digest.
//   - Token-Permissions: a top-level permissions block that only reads
//     (read-all, or each scope read or none); a job that writes declares
//     its scopes itself, and none asks for write-all.
//   - Dangerous-Workflow: no github.event.* or github.head_ref expression
//     inside a run: script, where a crafted title or branch name would be
//     spliced into the shell; such a value goes through env: instead.
//   - Dependency-Update-Tool and Security-Policy: .github/dependabot.yml
//     updates github-actions and gomod, and SECURITY.md exists.
//
// actionlint (`make lint-workflows`) checks that the workflows are valid;
// this package checks only the policy above.
package workflowpolicy
