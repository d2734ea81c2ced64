/*
Copyright 2026 The holdfast Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// holdfast glue, laid into the Karmada tree by holdfast's apply step from
// overlay/karmada: patch 0006-agent-follows-kubeconfig gives karmada-agent
// the controller-manager's own-credential guard, with the same flags and
// defaults, by using the controller-manager's options type (its package
// needs nothing the agent does not already build).

package options

import (
	cmoptions "github.com/karmada-io/karmada/cmd/controller-manager/app/options"
)

// OwnCredentialGuardOptions configures the guard on the agent's own
// karmada-apiserver credential: --own-credential-guard-action,
// -threshold, -window and -min-duration, as karmada-controller-manager's.
type OwnCredentialGuardOptions = cmoptions.OwnCredentialGuardOptions
