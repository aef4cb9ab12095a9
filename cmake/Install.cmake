# Installs the libraries, their headers and a CMake package so that merchants can
# find_package(webhooks) and link webhooks::common, webhooks::outbox, webhooks::publisher,
# webhooks::receiver.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS webhooks_common webhooks_outbox webhooks_publisher webhooks_receiver
        EXPORT webhooksTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(lib common outbox publisher receiver)
  if(EXISTS ${PROJECT_SOURCE_DIR}/${lib}/include)
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/${lib}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  endif()
endforeach()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/schema/ DESTINATION ${CMAKE_INSTALL_DATADIR}/webhooks/schema)
install(EXPORT webhooksTargets NAMESPACE webhooks::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/webhooks)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/webhooksConfig.cmake.in
        ${PROJECT_BINARY_DIR}/webhooksConfig.cmake
        INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/webhooks)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/webhooksConfigVersion.cmake
        COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/webhooksConfig.cmake ${PROJECT_BINARY_DIR}/webhooksConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/webhooks)
