# The Debian package: `cpack -G DEB` in a configured build folder (after building it) gives
# ipilab_<version>_<arch>.deb with the install tree of IpilabInstall.cmake under /usr. Its shared
# library dependencies come from dpkg-shlibdeps on the binary (libfmt, libhwloc, libtracecmd,
# libtraceevent, libtracefs, libstdc++, ...); gnuplot, which `--plot` runs, is recommended and
# trace-cmd suggested. scripts/test-deb builds it, installs it with apt-get and runs it from /.
set(CPACK_PACKAGE_NAME ipilab)
set(CPACK_PACKAGE_VENDOR "ipilab")
set(CPACK_PACKAGE_CONTACT "ipilab developers <ipilab@users.noreply.invalid>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "models, emulates and measures IPI delivery in virtual machines")
# Lines under 80 columns (Debian policy 5.6.13: the extended description is shown unwrapped).
string(CONCAT CPACK_PACKAGE_DESCRIPTION
    "ipilab executes Hyper-V enlightened IPIs (HvCallSendSyntheticClusterIpi[Ex])\n"
    "and GICv4.1 direct vSGI injection bit-exactly, with the Linux guest policies\n"
    "before and after each upstream change; simulates them on multi-socket hosts\n"
    "with a cost model whose every value carries its source; measures real IPI\n"
    "costs in KVM guests; and reads real Linux ftrace IPI traces.")
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "gnuplot-nox | gnuplot")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "trace-cmd")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_GENERATOR DEB)
include(CPack)
