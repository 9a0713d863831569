// ipilab/kvm/vm.cpp — the VMM: KVM setup, long mode, vCPU threads, exit handling, teardown.
#include "kvm/vm.h"

#include <fcntl.h>
#include <hwloc.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"

namespace ipilab::kvm {

namespace {

std::string errno_text(int e) { return std::strerror(e); }

// ioctl that retries on EINTR for setup calls (not KVM_RUN).
int xioctl(int fd, unsigned long req, unsigned long arg, const char* what) {
  int r;
  do { r = ::ioctl(fd, req, arg); } while (r < 0 && errno == EINTR);
  if (r < 0) throw std::runtime_error(fmt::format("KVM: {} failed: {}", what, errno_text(errno)));
  return r;
}
template <typename T>
int xioctl(int fd, unsigned long req, T* arg, const char* what) {
  return xioctl(fd, req, reinterpret_cast<unsigned long>(arg), what);
}

Fd open_kvm() {
  const int fd = ::open("/dev/kvm", O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT || e == ENXIO || e == ENODEV)
      throw UnavailableError("/dev/kvm does not exist: this machine has no KVM (no hardware virtualization "
                             "or the kvm module is not loaded)");
    if (e == EACCES || e == EPERM)
      throw UnavailableError("no permission to open /dev/kvm (add your user to group 'kvm' or run as root)");
    throw UnavailableError("cannot open /dev/kvm: " + errno_text(e));
  }
  Fd kvm(fd);
  if (::ioctl(kvm.get(), KVM_GET_API_VERSION, 0) != KVM_API_VERSION)
    throw UnavailableError("/dev/kvm speaks an unexpected KVM API version");
  return kvm;
}

void require_cap(int kvm_fd, long cap, const char* name) {
  if (::ioctl(kvm_fd, KVM_CHECK_EXTENSION, cap) <= 0)
    throw UnavailableError(fmt::format("this KVM lacks {} (needed by ipilab's VMM)", name));
}

void check_caps(int kvm_fd, bool need_msr_filter) {
  require_cap(kvm_fd, KVM_CAP_IRQCHIP, "KVM_CAP_IRQCHIP");
  require_cap(kvm_fd, KVM_CAP_SIGNAL_MSI, "KVM_CAP_SIGNAL_MSI");
  require_cap(kvm_fd, KVM_CAP_GET_TSC_KHZ, "KVM_CAP_GET_TSC_KHZ");
  require_cap(kvm_fd, KVM_CAP_IMMEDIATE_EXIT, "KVM_CAP_IMMEDIATE_EXIT");
  require_cap(kvm_fd, KVM_CAP_EXT_CPUID, "KVM_CAP_EXT_CPUID");
  if (need_msr_filter) {
    require_cap(kvm_fd, KVM_CAP_X86_USER_SPACE_MSR, "KVM_CAP_X86_USER_SPACE_MSR");
    require_cap(kvm_fd, KVM_CAP_X86_MSR_FILTER, "KVM_CAP_X86_MSR_FILTER");
  }
}

// The signal that kicks a vCPU thread out of KVM_RUN. Its handler does nothing: the point is only the
// EINTR. Installed once per process.
int kick_signal() { return SIGRTMIN + 4; }
void install_kick_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_handler = [](int) {};
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: KVM_RUN must return EINTR
    ::sigaction(kick_signal(), &sa, nullptr);
  });
}

const char* exit_reason_name(std::uint32_t r) {
  switch (r) {
    case KVM_EXIT_UNKNOWN: return "unknown";
    case KVM_EXIT_EXCEPTION: return "exception";
    case KVM_EXIT_IO: return "io";
    case KVM_EXIT_HYPERCALL: return "hypercall";
    case KVM_EXIT_DEBUG: return "debug";
    case KVM_EXIT_HLT: return "hlt";
    case KVM_EXIT_MMIO: return "mmio";
    case KVM_EXIT_IRQ_WINDOW_OPEN: return "irq_window_open";
    case KVM_EXIT_SHUTDOWN: return "shutdown (triple fault)";
    case KVM_EXIT_FAIL_ENTRY: return "fail_entry";
    case KVM_EXIT_INTR: return "intr";
    case KVM_EXIT_SET_TPR: return "set_tpr";
    case KVM_EXIT_INTERNAL_ERROR: return "internal_error";
    case KVM_EXIT_SYSTEM_EVENT: return "system_event";
    case KVM_EXIT_X86_RDMSR: return "x86_rdmsr";
    case KVM_EXIT_X86_WRMSR: return "x86_wrmsr";
    default: return "other";
  }
}

const char* vector_name(std::uint64_t v) {
  static const char* const names[] = {"#DE", "#DB", "NMI", "#BP", "#OF", "#BR", "#UD", "#NM",
                                      "#DF", "CSO", "#TS", "#NP", "#SS", "#GP", "#PF", "#15",
                                      "#MF", "#AC", "#MC", "#XM", "#VE", "#CP"};
  return v < std::size(names) ? names[v] : "exception";
}

// <linux/kvm.h> declares struct kvm_cpuid2 with __DECLARE_FLEX_ARRAY, which in C++ adds an empty struct
// member: sizeof becomes 12 and `entries` moves, so KVM_GET_SUPPORTED_CPUID / KVM_SET_CPUID2 get the
// wrong ioctl number and layout. We use the kernel's real layout (8-byte header) and numbers.
struct Cpuid2 {
  std::uint32_t nent;
  std::uint32_t padding;
  kvm_cpuid_entry2 entries[4096];
};
constexpr unsigned long kIoctlGetSupportedCpuid = _IOC(_IOC_READ | _IOC_WRITE, KVMIO, 0x05, 8);
constexpr unsigned long kIoctlSetCpuid2 = _IOC(_IOC_WRITE, KVMIO, 0x90, 8);

std::vector<kvm_cpuid_entry2> supported_cpuid(int kvm_fd) {
  for (std::uint32_t n = 128; n <= 4096; n *= 2) {
    auto c = std::make_unique<Cpuid2>();
    c->nent = n;
    if (::ioctl(kvm_fd, kIoctlGetSupportedCpuid, c.get()) == 0)
      return {c->entries, c->entries + c->nent};
    if (errno != E2BIG) throw std::runtime_error("KVM: KVM_GET_SUPPORTED_CPUID failed: " + errno_text(errno));
  }
  throw std::runtime_error("KVM: KVM_GET_SUPPORTED_CPUID: too many entries");
}

std::uint32_t sig(const char* s4) {
  std::uint32_t v;
  std::memcpy(&v, s4, 4);
  return v;
}

// CPUID as ipilab's guests see it: the host's supported set, x2APIC and the hypervisor bit, and the
// hypervisor leaves chosen by the config.
std::vector<kvm_cpuid_entry2> guest_cpuid(int kvm_fd, const VmConfig& cfg, unsigned apic_id) {
  std::vector<kvm_cpuid_entry2> out;
  for (const auto& e : supported_cpuid(kvm_fd)) {
    if (e.function >= 0x40000000u && e.function < 0x40010000u) continue;  // rebuilt below
    kvm_cpuid_entry2 c = e;
    if (c.function == 1) {
      c.ecx |= (1u << 21) | (1u << 31);            // x2APIC, hypervisor present
      c.ebx = (c.ebx & 0x00FFFFFFu) | (apic_id << 24);
    }
    if (c.function == 0xB || c.function == 0x1F) c.edx = apic_id;  // x2APIC ID in topology leaves
    out.push_back(c);
  }
  auto leaf = [&](std::uint32_t fn, std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t d) {
    kvm_cpuid_entry2 e{};
    e.function = fn;
    e.eax = a; e.ebx = b; e.ecx = c; e.edx = d;
    out.push_back(e);
  };
  if (cfg.signature == HypervisorSignature::Kvm) {
    // KVM PV leaves (Documentation/virt/kvm/x86/cpuid.rst): signature "KVMKVMKVM\0\0\0",
    // 0x40000001.EAX bit 11 = KVM_FEATURE_PV_SEND_IPI.
    leaf(0x40000000, 0x40000001, sig("KVMK"), sig("VMKV"), sig("M\0\0\0"));
    leaf(0x40000001, 1u << 11, 0, 0, 0);
  } else {
    // Hyper-V leaves (TLFS feature discovery; Linux hyperv-tlfs.h), emulated in user space.
    leaf(0x40000000, 0x40000005, sig("Micr"), sig("osof"), sig("t Hv"));
    leaf(0x40000001, sig("Hv#1"), 0, 0, 0);
    leaf(0x40000002, 0x00003839, 0x000A0000, 0, 0);  // build 14393, version 10.0
    // 0x40000003: EAX bit 5 hypercall MSRs, bit 6 VP_INDEX MSR; EDX bit 4 XMM fast hypercall input.
    leaf(0x40000003, (1u << 5) | (1u << 6), 0, 0, cfg.hyperv_xmm_input ? (1u << 4) : 0u);
    // 0x40000004: EAX bit 10 CLUSTER_IPI_RECOMMENDED, bit 11 EX_PROCESSOR_MASKS_RECOMMENDED.
    leaf(0x40000004, (1u << 10) | (1u << 11), 0xFFFFFFFFu, 0, 0);
    leaf(0x40000005, kMaxVcpus, 0, 0, 0);
  }
  return out;
}

// What the vCPU threads of one Vm::run share: the first failure, the stop flag, how many finished.
struct RunFailure {
  unsigned vcpu;
  std::string reason;
  std::uint64_t rip;
  std::string detail;
};
struct RunControl {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<RunFailure> failure;
  std::atomic<bool> stop{false};
  unsigned done_count = 0;

  void fail(unsigned vcpu, std::string reason, std::uint64_t rip, std::string detail) {
    std::lock_guard lk(mu);
    if (!failure) failure = RunFailure{vcpu, std::move(reason), rip, std::move(detail)};
    stop = true;
    cv.notify_all();
  }
  void finished() {
    std::lock_guard lk(mu);
    ++done_count;
    cv.notify_all();
  }
};

// Binds the calling thread to host PU `pu` (hwloc logical index).
void bind_thread_to_pu(unsigned pu) {
  hwloc_topology_t topo;
  hwloc_topology_init(&topo);
  hwloc_topology_load(topo);
  if (hwloc_obj_t obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, pu)) hwloc_set_cpubind(topo, obj->cpuset, HWLOC_CPUBIND_THREAD);
  hwloc_topology_destroy(topo);
}

}  // namespace

GuestError::GuestError(unsigned vcpu, std::string exit_reason, std::uint64_t rip, const std::string& detail)
    : std::runtime_error(fmt::format("guest vCPU {}: {} at RIP {:#x}{}{}", vcpu, exit_reason, rip,
                                     detail.empty() ? "" : ": ", detail)),
      vcpu_(vcpu), exit_reason_(std::move(exit_reason)), rip_(rip) {}

void check_kvm_available(bool need_msr_filter) {
  Fd kvm = open_kvm();
  check_caps(kvm.get(), need_msr_filter);
}

// ------------------------------------------------------------------------------------------------
struct Vm::Vcpu final : VcpuContext {
  Vm* vm = nullptr;
  unsigned idx = 0;
  unsigned id = 0;  // KVM vCPU id = x2APIC ID
  Fd fd;
  Mapping run_map;
  kvm_run* run = nullptr;
  std::thread thread;
  ExitCounts exits;
  std::atomic<bool> done{false};
  std::atomic<bool> in_thread{false};

  /// The vCPU thread: KVM_RUN until Done, a failure or the stop flag.
  void run_loop(RunControl& rc);
  /// Handles the exit in `run`; false when the thread ends (Done, or a failure recorded in rc).
  bool handle_exit(RunControl& rc);
  /// Segments, control registers and EFER of 64-bit mode, XCR0, and runnable (no wait-for-SIPI).
  void enter_long_mode();

  unsigned index() const override { return idx; }
  unsigned apic_id() const override { return id; }
  kvm_regs regs() const override {
    kvm_regs r{};
    xioctl(fd.get(), KVM_GET_REGS, &r, "KVM_GET_REGS");
    return r;
  }
  void set_regs(const kvm_regs& r) override {
    xioctl(fd.get(), KVM_SET_REGS, const_cast<kvm_regs*>(&r), "KVM_SET_REGS");
  }
  kvm_fpu fpu() const override {
    kvm_fpu f{};
    xioctl(fd.get(), KVM_GET_FPU, &f, "KVM_GET_FPU");
    return f;
  }
  std::uint8_t* guest_memory(std::uint64_t gpa, std::uint64_t len) override {
    if (gpa >= kGuestMemBytes || len > kGuestMemBytes - gpa) return nullptr;
    return static_cast<std::uint8_t*>(vm->mem_.get()) + gpa;
  }
  void inject_exception(std::uint8_t vector) override {
    kvm_vcpu_events ev{};
    xioctl(fd.get(), KVM_GET_VCPU_EVENTS, &ev, "KVM_GET_VCPU_EVENTS");
    ev.exception.injected = 1;
    ev.exception.nr = vector;
    ev.exception.has_error_code = 0;
    ev.exception.error_code = 0;
    ev.flags = 0;
    xioctl(fd.get(), KVM_SET_VCPU_EVENTS, &ev, "KVM_SET_VCPU_EVENTS");
  }
  void signal_msi(std::uint32_t apic_id, std::uint8_t vector) override {
    // MSI address 0xFEE00000 | dest[7:0] << 12 (physical, fixed); data = vector, edge.
    kvm_msi msi{};
    msi.address_lo = 0xFEE00000u | ((apic_id & 0xFFu) << 12);
    msi.address_hi = apic_id & 0xFFFFFF00u;  // x2APIC ext dest bits (KVM_CAP_X2APIC_API); 0 here
    msi.data = vector;
    int r;
    do { r = ::ioctl(vm->vm_.get(), KVM_SIGNAL_MSI, &msi); } while (r < 0 && errno == EINTR);
    if (r < 0) throw std::runtime_error("KVM_SIGNAL_MSI failed: " + errno_text(errno));
  }
};

namespace {

// The host PU (hwloc logical index) of each vCPU: the configured ones in turn, or vCPU i on PU i mod
// the host's PU count.
std::vector<unsigned> host_pus_for(const VmConfig& config) {
  std::vector<unsigned> pus;
  hwloc_topology_t topo;
  hwloc_topology_init(&topo);
  hwloc_topology_load(topo);
  const int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  hwloc_topology_destroy(topo);
  for (unsigned i = 0; i < config.vcpus; ++i)
    pus.push_back(config.host_pus.empty() ? i % static_cast<unsigned>(n > 0 ? n : 1)
                                          : config.host_pus[i % config.host_pus.size()]);
  return pus;
}

// KVM_CAP_X86_USER_SPACE_MSR with a filter: the listed MSR ranges exit to user space.
void set_user_msr_filter(int vmfd, const VmConfig& config) {
  kvm_enable_cap cap{};
  cap.cap = KVM_CAP_X86_USER_SPACE_MSR;
  cap.args[0] = KVM_MSR_EXIT_REASON_FILTER;
  xioctl(vmfd, KVM_ENABLE_CAP, &cap, "KVM_ENABLE_CAP(X86_USER_SPACE_MSR)");
  kvm_msr_filter filter{};
  filter.flags = KVM_MSR_FILTER_DEFAULT_ALLOW;
  static std::uint8_t deny_bitmap[64] = {};  // 0 bits = deny = exit to user space (up to 512 MSRs)
  if (config.user_msrs.size() > KVM_MSR_FILTER_MAX_RANGES) throw std::invalid_argument("too many MSR ranges");
  for (std::size_t i = 0; i < config.user_msrs.size(); ++i) {
    auto [first, last] = config.user_msrs[i];
    if (last < first || last - first >= 512) throw std::invalid_argument("bad MSR range");
    filter.ranges[i].flags = KVM_MSR_FILTER_READ | KVM_MSR_FILTER_WRITE;
    filter.ranges[i].base = first;
    filter.ranges[i].nmsrs = last - first + 1;
    filter.ranges[i].bitmap = deny_bitmap;
  }
  xioctl(vmfd, KVM_X86_SET_MSR_FILTER, &filter, "KVM_X86_SET_MSR_FILTER");
}

// Long-mode boot tables in guest memory: page tables (identity map of the first 1 GiB with 2 MiB
// pages) and the GDT.
void write_boot_tables(Vm& vm) {
  auto* pml4 = reinterpret_cast<std::uint64_t*>(vm.memory(kPml4Gpa, 4096));
  auto* pdpt = reinterpret_cast<std::uint64_t*>(vm.memory(kPdptGpa, 4096));
  auto* pd = reinterpret_cast<std::uint64_t*>(vm.memory(kPdGpa, 4096));
  constexpr std::uint64_t P = 1, RW = 2, PS = 0x80;
  pml4[0] = kPdptGpa | P | RW;
  pdpt[0] = kPdGpa | P | RW;
  for (std::uint64_t i = 0; i < 512; ++i) pd[i] = (i << 21) | P | RW | PS;

  // GDT: null, 64-bit code (0x08), data (0x10), 64-bit busy TSS (0x18, 16 bytes).
  auto* gdt = reinterpret_cast<std::uint64_t*>(vm.memory(kGdtGpa, 64));
  gdt[0] = 0;
  gdt[1] = 0x00AF9B000000FFFFull;
  gdt[2] = 0x00CF93000000FFFFull;
  gdt[3] = 0x0000000000000067ull | ((kTssGpa & 0xFFFFFFull) << 16) | (0x8Bull << 40) |
           (((kTssGpa >> 24) & 0xFFull) << 56);
  gdt[4] = kTssGpa >> 32;
}

}  // namespace

void Vm::Vcpu::enter_long_mode() {
  const int fd = this->fd.get();
  kvm_sregs s{};
  xioctl(fd, KVM_GET_SREGS, &s, "KVM_GET_SREGS");
  kvm_segment code{};
  code.base = 0; code.limit = 0xFFFFFFFF; code.selector = 0x08; code.type = 0xB; code.present = 1;
  code.dpl = 0; code.db = 0; code.s = 1; code.l = 1; code.g = 1;
  kvm_segment data = code;
  data.selector = 0x10; data.type = 0x3; data.l = 0; data.db = 1;
  s.cs = code;
  s.ds = s.es = s.fs = s.gs = s.ss = data;
  s.tr = kvm_segment{};
  s.tr.base = kTssGpa; s.tr.limit = 0x67; s.tr.selector = 0x18; s.tr.type = 0xB; s.tr.present = 1;
  s.ldt = kvm_segment{};
  s.ldt.type = 0x2; s.ldt.present = 1; s.ldt.unusable = 1;
  s.gdt.base = kGdtGpa; s.gdt.limit = 5 * 8 - 1;
  s.idt.base = kIdtGpa; s.idt.limit = 256 * 16 - 1;
  s.cr0 = 0x80050033;  // PG | AM | WP | NE | ET | MP | PE
  s.cr3 = kPml4Gpa;
  s.cr4 = 0x20 | 0x200 | 0x400 | 0x40000;  // PAE | OSFXSR | OSXMMEXCPT | OSXSAVE
  s.efer = 0x500;                // LME | LMA
  xioctl(fd, KVM_SET_SREGS, &s, "KVM_SET_SREGS");
  // XCR0 = x87 | SSE: XMM registers usable (the Hyper-V XMM fast hypercalls load XMM0..5). Without
  // it the PVM backend fails SSE instructions with an emulation error.
  kvm_xcrs xcrs{};
  xcrs.nr_xcrs = 1;
  xcrs.xcrs[0].xcr = 0;
  xcrs.xcrs[0].value = 0x3;
  xioctl(fd, KVM_SET_XCRS, &xcrs, "KVM_SET_XCRS");
  // With the in-kernel irqchip, application processors start in wait-for-SIPI; we boot them directly.
  kvm_mp_state mp{};
  mp.mp_state = KVM_MP_STATE_RUNNABLE;
  xioctl(fd, KVM_SET_MP_STATE, &mp, "KVM_SET_MP_STATE");
}

Vm::Vm(VmConfig config) : config_(std::move(config)) {
  if (config_.vcpus == 0 || config_.vcpus > kMaxVcpus)
    throw InputError("--vcpus", fmt::format("must be 1..{}", kMaxVcpus));
  if (config_.vcpu_ids.empty())
    for (unsigned i = 0; i < config_.vcpus; ++i) config_.vcpu_ids.push_back(i);
  if (config_.vcpu_ids.size() != config_.vcpus) throw std::invalid_argument("VmConfig: vcpu_ids size");
  kvm_ = open_kvm();
  check_caps(kvm_.get(), !config_.user_msrs.empty());
  install_kick_handler();

  pus_ = host_pus_for(config_);
  const int vmfd = ::ioctl(kvm_.get(), KVM_CREATE_VM, 0);
  if (vmfd < 0) throw UnavailableError("KVM_CREATE_VM failed: " + errno_text(errno));
  vm_ = Fd(vmfd);
  xioctl(vm_.get(), KVM_SET_TSS_ADDR, 0xFFFBD000ul, "KVM_SET_TSS_ADDR");
  xioctl(vm_.get(), KVM_CREATE_IRQCHIP, 0ul, "KVM_CREATE_IRQCHIP");

  if (!config_.user_msrs.empty()) set_user_msr_filter(vm_.get(), config_);
  // Memory: one anonymous mapping, one memslot at GPA 0.
  void* mem = ::mmap(nullptr, kGuestMemBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                     -1, 0);
  if (mem == MAP_FAILED) throw std::runtime_error("mmap of guest memory failed: " + errno_text(errno));
  mem_ = Mapping(mem, kGuestMemBytes);
  ::madvise(mem, kGuestMemBytes, MADV_HUGEPAGE);
  kvm_userspace_memory_region region{};
  region.slot = 0;
  region.guest_phys_addr = 0;
  region.memory_size = kGuestMemBytes;
  region.userspace_addr = reinterpret_cast<std::uint64_t>(mem);
  xioctl(vm_.get(), KVM_SET_USER_MEMORY_REGION, &region, "KVM_SET_USER_MEMORY_REGION");

  write_boot_tables(*this);
  const int mmap_size = xioctl(kvm_.get(), KVM_GET_VCPU_MMAP_SIZE, 0ul, "KVM_GET_VCPU_MMAP_SIZE");
  for (unsigned i = 0; i < config_.vcpus; ++i) {
    auto v = std::make_unique<Vcpu>();
    v->vm = this;
    v->idx = i;
    v->id = config_.vcpu_ids[i];
    const int fd = ::ioctl(vm_.get(), KVM_CREATE_VCPU, static_cast<unsigned long>(v->id));
    if (fd < 0) throw std::runtime_error(fmt::format("KVM_CREATE_VCPU {} failed: {}", v->id, errno_text(errno)));
    v->fd = Fd(fd);
    void* r = ::mmap(nullptr, static_cast<std::size_t>(mmap_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (r == MAP_FAILED) throw std::runtime_error("mmap of kvm_run failed: " + errno_text(errno));
    v->run_map = Mapping(r, static_cast<std::size_t>(mmap_size));
    v->run = static_cast<kvm_run*>(r);

    const auto entries = guest_cpuid(kvm_.get(), config_, v->id);
    auto c = std::make_unique<Cpuid2>();
    c->nent = static_cast<std::uint32_t>(entries.size());
    std::memcpy(c->entries, entries.data(), entries.size() * sizeof(kvm_cpuid_entry2));
    xioctl(fd, kIoctlSetCpuid2, c.get(), "KVM_SET_CPUID2");

    v->enter_long_mode();
    vcpus_.push_back(std::move(v));
  }
}

Vm::~Vm() {
  for (auto& v : vcpus_)
    if (v->thread.joinable()) v->thread.join();
}

std::uint8_t* Vm::memory(std::uint64_t gpa, std::uint64_t len) {
  if (gpa >= kGuestMemBytes || len > kGuestMemBytes - gpa)
    throw std::out_of_range(fmt::format("guest memory [{:#x}, +{:#x}) is not backed", gpa, len));
  return static_cast<std::uint8_t*>(mem_.get()) + gpa;
}

std::uint64_t Vm::tsc_khz() const {
  const int r = ::ioctl(vcpus_.at(0)->fd.get(), KVM_GET_TSC_KHZ, 0);
  if (r <= 0) throw std::runtime_error("KVM_GET_TSC_KHZ failed: " + errno_text(errno));
  return static_cast<std::uint64_t>(r);
}

unsigned Vm::host_pu(unsigned vcpu) const { return pus_.at(vcpu); }

const ExitCounts& Vm::exits_so_far(unsigned vcpu) const { return vcpus_.at(vcpu)->exits; }

void Vm::load(const GuestImage& image) {
  if (image.code.size() > kCodeMaxBytes) throw std::invalid_argument("guest code too large");
  if (image.entry.size() != config_.vcpus) throw std::invalid_argument("GuestImage: one entry per vCPU");
  std::memcpy(memory(kCodeGpa, image.code.size()), image.code.data(), image.code.size());
  // Debug aid (docs/kvm-harness.md): IPILAB_KVM_DUMP_CODE=FILE writes the raw guest code, to be read
  // with `objdump -D -b binary -m i386:x86-64 --adjust-vma=0x10000 FILE`.
  if (const char* dump = std::getenv("IPILAB_KVM_DUMP_CODE"))
    if (std::FILE* f = std::fopen(dump, "wb")) {
      std::fwrite(image.code.data(), 1, image.code.size(), f);
      std::fclose(f);
    }
  auto* idt = reinterpret_cast<std::uint64_t*>(memory(kIdtGpa, 4096));
  for (std::size_t v = 0; v < 256; ++v) {
    const std::uint64_t h = v < image.idt.size() ? image.idt[v] : 0;
    if (h == 0) { idt[2 * v] = idt[2 * v + 1] = 0; continue; }
    // 64-bit interrupt gate: offset[15:0], selector 0x08, IST 0, type 0xE, DPL 0, P; offset[63:16].
    idt[2 * v] = (h & 0xFFFF) | (0x08ull << 16) | (0x8Eull << 40) | (((h >> 16) & 0xFFFF) << 48);
    idt[2 * v + 1] = h >> 32;
  }
  for (auto& v : vcpus_) {
    kvm_regs r{};
    r.rip = image.entry[v->idx];
    r.rsp = kStackGpa + (v->idx + 1) * kStackBytes - 16;
    r.rflags = 0x2;
    r.rdi = v->idx;
    r.rsi = v->id;
    xioctl(v->fd.get(), KVM_SET_REGS, &r, "KVM_SET_REGS");
  }
}

void Vm::Vcpu::run_loop(RunControl& rc) {
  bind_thread_to_pu(vm->pus_[idx]);
  for (;;) {
    if (rc.stop) return;
    const int r = ::ioctl(fd.get(), KVM_RUN, 0);
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) {
        if (rc.stop) return;
        run->immediate_exit = 0;
        continue;
      }
      rc.fail(idx, "KVM_RUN error", 0, errno_text(errno));
      return;
    }
    try {
      if (!handle_exit(rc)) return;
    } catch (const std::exception& e) {
      rc.fail(idx, "VMM error while handling an exit", 0, e.what());
      return;
    }
  }
}

bool Vm::Vcpu::handle_exit(RunControl& rc) {
  kvm_run& run = *this->run;
  switch (run.exit_reason) {
    case KVM_EXIT_IO: {
      const std::uint16_t port = run.io.port;
      std::uint32_t value = 0;
      std::memcpy(&value, reinterpret_cast<std::uint8_t*>(&run) + run.io.data_offset,
                  std::min<std::uint32_t>(run.io.size, 4));
      if (port == kUcallPort && run.io.direction == KVM_EXIT_IO_OUT) {
        ++exits["io:ucall"];
        const kvm_regs g = regs();
        switch (static_cast<UcallCmd>(value)) {
          case UcallCmd::Done: {
            done = true;
            rc.finished();
            return false;
          }
          case UcallCmd::Sync:
            if (vm->on_sync_) vm->on_sync_(idx, g.rdi);
            break;
          case UcallCmd::Fail:
            rc.fail(idx, "guest check failed", g.rip,
                 fmt::format("check {} got {:#x}, expected {:#x}", g.rdi, g.rsi, g.rdx));
            return false;
          case UcallCmd::Exception:
            rc.fail(idx, fmt::format("guest exception {} (vector {})", vector_name(g.rdi), g.rdi), g.rsi,
                 fmt::format("error code {:#x}", g.rdx));
            return false;
          case UcallCmd::Unexpected:
            rc.fail(idx, fmt::format("unexpected interrupt vector {:#x}", g.rdi), g.rsi, "");
            return false;
          default:
            rc.fail(idx, "bad ucall", g.rip, fmt::format("command {}", value));
            return false;
        }
        break;
      }
      ++exits[port == kHvHypercallPort ? std::string("io:hv-hypercall") : fmt::format("io:{:#x}", port)];
      if (run.io.direction == KVM_EXIT_IO_OUT && vm->handler_ && vm->handler_->port_out(*this, port, value)) break;
      rc.fail(idx, fmt::format("unexpected I/O {} port {:#x}", run.io.direction ? "OUT to" : "IN from", port),
           regs().rip, "");
      return false;
    }
    case KVM_EXIT_X86_RDMSR: {
      ++exits["x86_rdmsr"];
      auto val = vm->handler_ ? vm->handler_->read_msr(*this, run.msr.index) : std::nullopt;
      run.msr.error = val ? 0 : 1;
      run.msr.data = val.value_or(0);
      break;
    }
    case KVM_EXIT_X86_WRMSR: {
      ++exits["x86_wrmsr"];
      run.msr.error = (vm->handler_ && vm->handler_->write_msr(*this, run.msr.index, run.msr.data)) ? 0 : 1;
      break;
    }
    case KVM_EXIT_MMIO:
      ++exits["mmio"];
      rc.fail(idx, "access to unbacked memory (KVM_EXIT_MMIO)", regs().rip,
           fmt::format("GPA {:#x}", run.mmio.phys_addr));
      return false;
    case KVM_EXIT_FAIL_ENTRY:
      ++exits["fail_entry"];
      rc.fail(idx, "VM entry failed (KVM_EXIT_FAIL_ENTRY)", regs().rip,
           fmt::format("hardware reason {:#x}", run.fail_entry.hardware_entry_failure_reason));
      return false;
    case KVM_EXIT_INTERNAL_ERROR:
      ++exits["internal_error"];
      rc.fail(idx, "KVM internal error (KVM_EXIT_INTERNAL_ERROR)", regs().rip,
           fmt::format("suberror {} data [{:#x}]", run.internal.suberror,
                       fmt::join(run.internal.data, run.internal.data + std::min<std::uint32_t>(run.internal.ndata, 16),
                                 ", ")));
      return false;
    case KVM_EXIT_INTR:
      ++exits["intr"];
      break;
    default:
      ++exits[exit_reason_name(run.exit_reason)];
      rc.fail(idx, fmt::format("exit {} ({})", exit_reason_name(run.exit_reason), run.exit_reason),
           regs().rip, "");
      return false;
  }
  return true;
}

RunReport Vm::run() {
  RunControl rc;
  const auto t0 = std::chrono::steady_clock::now();
  for (auto& v : vcpus_) {
    v->run->immediate_exit = 0;
    v->thread = std::thread([&rc, vp = v.get()] { vp->run_loop(rc); });
  }
  bool timed_out = false;
  {
    std::unique_lock lk(rc.mu);
    timed_out = !rc.cv.wait_until(lk, t0 + config_.timeout,
                                  [&] { return rc.failure.has_value() || rc.done_count == vcpus_.size(); });
    if (rc.failure || timed_out) rc.stop = true;
  }
  if (rc.stop) {
    for (auto& v : vcpus_) {
      v->run->immediate_exit = 1;
      if (!v->done) ::pthread_kill(v->thread.native_handle(), kick_signal());
    }
    // A thread may be between the stop check and KVM_RUN: immediate_exit makes that KVM_RUN return at
    // once with EINTR; a thread inside KVM_RUN is kicked out by the signal. Either way it sees `stop`.
    for (auto& v : vcpus_) v->thread.join();
  } else {
    for (auto& v : vcpus_) v->thread.join();
  }
  RunReport report;
  report.wall = std::chrono::steady_clock::now() - t0;
  for (auto& v : vcpus_) report.exits.push_back(v->exits);
  if (rc.failure) throw GuestError(rc.failure->vcpu, rc.failure->reason, rc.failure->rip, rc.failure->detail);
  if (timed_out) {
    std::string where;
    unsigned first = 0;
    std::uint64_t first_rip = 0;
    bool have = false;
    for (auto& v : vcpus_) {
      if (v->done) continue;
      const std::uint64_t rip = v->regs().rip;
      if (!have) { first = v->idx; first_rip = rip; have = true; }
      where += fmt::format("{}vCPU {} at RIP {:#x}", where.empty() ? "" : ", ", v->idx, rip);
    }
    throw GuestError(first, fmt::format("timeout: did not finish within {} ms", config_.timeout.count()),
                     first_rip, "still running: " + where);
  }
  return report;
}

}  // namespace ipilab::kvm
