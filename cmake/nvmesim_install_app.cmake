# The installed command, as Debian users expect: bin/nvmesim, its man page
# and its bash completion (both generated from the built command's own help
# texts by scripts/nvmesim_docs.py, so they cannot drift from its option
# table), and `cpack -G DEB` for a .deb of it all (the command, the
# component's libraries, headers and CMake package).
find_package(Python3 COMPONENTS Interpreter)
install(TARGETS nvmesim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(Python3_Interpreter_FOUND)
  set(_gen ${PROJECT_BINARY_DIR}/share)
  add_custom_command(
    OUTPUT ${_gen}/man/man1/nvmesim.1 ${_gen}/bash-completion/completions/nvmesim
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_gen}/man/man1 ${_gen}/bash-completion/completions
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/nvmesim_docs.py man $<TARGET_FILE:nvmesim>
            ${_gen}/man/man1/nvmesim.1
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/nvmesim_docs.py completion $<TARGET_FILE:nvmesim>
            ${_gen}/bash-completion/completions/nvmesim
    DEPENDS nvmesim ${PROJECT_SOURCE_DIR}/scripts/nvmesim_docs.py
    COMMENT "Generating the man page and bash completion from nvmesim's help texts")
  add_custom_target(nvmesim_docs ALL DEPENDS ${_gen}/man/man1/nvmesim.1 ${_gen}/bash-completion/completions/nvmesim)
  install(FILES ${_gen}/man/man1/nvmesim.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  install(FILES ${_gen}/bash-completion/completions/nvmesim DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
else()
  message(STATUS "nvmesim: no python3: the man page and bash completion are not generated")
endif()

# The Python module: where Debian's python3 looks for packages of prefix /usr
# (the .deb); under another prefix, PYTHONPATH=<prefix>/lib/python3/dist-packages.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/nvmesim DESTINATION lib/python3/dist-packages
        PATTERN __pycache__ EXCLUDE)

set(CPACK_PACKAGE_NAME nvmesim)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "nvmesim developers <nvmesim@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Simulator of a virtualized NVMe I/O path: doorbell exits, EventIdx hit rates, I/O latency")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# Debian 12's run-time libraries of what the command links (ldd build/nvmesim);
# explicit, so packaging needs no dpkg-shlibdeps.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libsystemc (>= 2.3.4), libboost-program-options1.74.0, libstdc++6, libc6")
include(CPack)
