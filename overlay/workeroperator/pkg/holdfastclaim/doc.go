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

// Package holdfastclaim keeps the hub controllers' claim,
// status.activeController of this worker's controller.kubeslice.io Cluster,
// through the worker's own status updates of that Cluster. holdfast overlay,
// laid into the worker-operator tree by holdfast's apply step from
// overlay/workeroperator (patch 0005-keep-active-controller-claim); it draws on
// controller-runtime's client and, for whether the worker follows hub
// failover, the carried hubfollow library.
//
// Why it exists: v1.6.4 writes its Cluster status with kubeslice/apis v0.4.0's
// typed Cluster, which has no activeController field. A status Update replaces
// the whole status, so every one of them erased the claim on the hub the
// worker is connected to, and with the hubs disagreeing the worker then saw
// only the other hub's stale claim and switched to the wrong hub.
//
// Only a worker that follows hub failover reads claims, so only its clients
// keep them: without a secondary hub NewClient is client.New, and the worker
// makes v1.6.4's requests (and, like v1.6.4, overwrites a claim it never
// reads).
package holdfastclaim
