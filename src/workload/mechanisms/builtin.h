// ipilab/workload/mechanisms/builtin.h — the shipped mechanisms' descriptions (registry.cpp lists
// them; one file each).
#pragma once

#include "workload/mechanism.h"

namespace ipilab::workload {

MechanismInfo describe_hyperv();              // hyperv.cpp
MechanismInfo describe_x2apic_physical();     // x2apic_physical.cpp
MechanismInfo describe_x2apic_cluster();      // x2apic_cluster.cpp
MechanismInfo describe_kvm_pv();              // kvm_pv.cpp
MechanismInfo describe_ipiv();                // ipiv.cpp
MechanismInfo describe_native_x86();          // native_x86.cpp
MechanismInfo describe_gicv4_1_vsgi();        // gicv4_1_vsgi.cpp
MechanismInfo describe_gicv3_emulated_sgi();  // gicv3_emulated_sgi.cpp
MechanismInfo describe_native_gicv3();        // native_gicv3.cpp
MechanismInfo describe_xapic();               // xapic.cpp
MechanismInfo describe_avic();                // avic.cpp
MechanismInfo describe_x2avic();              // x2avic.cpp

}  // namespace ipilab::workload
