# FindARMCI: ARMCI-MPI as Debian packages it (libarmci-mpi-dev): armci.h, message.h and
# libarmci (a static library built against Open MPI). Defines ARMCI_FOUND and ARMCI::armci,
# which links MPI::MPI_C (call find_package(MPI) first).
find_path(ARMCI_INCLUDE_DIR armci.h)
find_library(ARMCI_LIBRARY NAMES armci-openmpi armci)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(ARMCI REQUIRED_VARS ARMCI_INCLUDE_DIR ARMCI_LIBRARY)

if(ARMCI_FOUND AND NOT TARGET ARMCI::armci)
  add_library(ARMCI::armci UNKNOWN IMPORTED)
  set_target_properties(ARMCI::armci PROPERTIES
    IMPORTED_LOCATION "${ARMCI_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${ARMCI_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES MPI::MPI_C)
endif()
mark_as_advanced(ARMCI_INCLUDE_DIR ARMCI_LIBRARY)
