// ipilab/workload/builtin.h — the built-in workloads' descriptions (registry.cpp lists them).
#pragma once

#include "workload/workload.h"

namespace ipilab::workload {

WorkloadInfo describe_smp_call_function_single();  // smp_call_function_single.cpp
WorkloadInfo describe_ipi_hw();                    // ipi_hw.cpp
WorkloadInfo describe_multicast();                 // multicast.cpp
WorkloadInfo describe_kick();                      // kick.cpp
WorkloadInfo describe_storm();                     // storm.cpp
WorkloadInfo describe_wakeup();                    // wakeup.cpp
WorkloadInfo describe_its_commands();              // its_commands.cpp
WorkloadInfo describe_kvm_bench();                 // kvm_bench.cpp
WorkloadInfo describe_ipi_benchmark();             // ipi_benchmark.cpp
WorkloadInfo describe_mmio_read_vgic();            // mmio_read_vgic.cpp

}  // namespace ipilab::workload
