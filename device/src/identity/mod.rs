//! Device identity: sysfs enumeration, selectors, host manifest, deny list.
