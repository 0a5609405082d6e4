# FindPVM: PVM 3.4 as Debian packages it (pvm-dev): pvm3.h, libpvm3, libgpvm3 (groups).
# Defines PVM_FOUND, PVM::pvm3 and PVM::gpvm3 (group library; links PVM::pvm3),
# and PVM_DAEMON (the pvmd binary, used to start a private local virtual machine).
find_path(PVM_INCLUDE_DIR pvm3.h)
find_library(PVM_LIBRARY pvm3)
find_library(PVM_GROUP_LIBRARY gpvm3)
find_program(PVM_DAEMON pvmd PATHS /usr/lib/pvm3/lib NO_DEFAULT_PATH)
find_program(PVM_DAEMON pvmd)
find_program(PVM_GROUP_SERVER pvmgs PATHS /usr/lib/pvm3/lib NO_DEFAULT_PATH)
find_program(PVM_GROUP_SERVER pvmgs)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(PVM
  REQUIRED_VARS PVM_INCLUDE_DIR PVM_LIBRARY PVM_GROUP_LIBRARY PVM_DAEMON PVM_GROUP_SERVER)

if(PVM_FOUND AND NOT TARGET PVM::pvm3)
  add_library(PVM::pvm3 UNKNOWN IMPORTED)
  set_target_properties(PVM::pvm3 PROPERTIES
    IMPORTED_LOCATION "${PVM_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${PVM_INCLUDE_DIR}")
  add_library(PVM::gpvm3 UNKNOWN IMPORTED)
  set_target_properties(PVM::gpvm3 PROPERTIES
    IMPORTED_LOCATION "${PVM_GROUP_LIBRARY}"
    INTERFACE_LINK_LIBRARIES PVM::pvm3)
endif()
mark_as_advanced(PVM_INCLUDE_DIR PVM_LIBRARY PVM_GROUP_LIBRARY PVM_DAEMON PVM_GROUP_SERVER)
