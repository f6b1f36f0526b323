//! `Runtime::simulator_with`: the simulated machine set up from code, one per process. One
//! `#[test]`: the first valid configuration fixes this process's simulator.

use ascendcl::{Error, Runtime, SimConfig, SimDevice};

#[test]
fn the_first_configuration_fixes_the_machine() {
    let unknown = SimConfig::new().devices(["Ascend910B4", "Ascend999"]);
    let e = Runtime::simulator_with(&unknown).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.starts_with("\"Ascend999\" is not a SoC the simulator knows; use one of Ascend910_9391")),
        "{e}"
    );
    assert!(matches!(
        Runtime::simulator_with(&SimConfig::new().devices(Vec::<SimDevice>::new())),
        Err(Error::InvalidArgument(m)) if m == "the simulated machine needs at least one device"
    ));
    assert!(matches!(
        Runtime::simulator_with(&SimConfig::new().fault("aclrtMallocc", 1)),
        Err(Error::InvalidArgument(m)) if m.contains("\"aclrtMallocc\" is not a simulated symbol")
    ));

    let config = SimConfig::new()
        .devices([
            SimDevice::new("Ascend910B4").mem_bytes(64 << 20),
            SimDevice::new("Ascend310P3").mem_bytes(32 << 20),
        ])
        .hccl_timeout_ms(1_500);
    let rt = Runtime::simulator_with(&config).unwrap();
    assert_eq!(rt.device_count().unwrap(), 2);
    let d1 = rt.device(1).unwrap();
    assert_eq!(d1.soc_name(), "Ascend310P3");
    assert_eq!(d1.memory_info().unwrap().total, 32 << 20);
    assert_eq!(rt.device(0).unwrap().memory_info().unwrap().total, 64 << 20);
    assert_eq!(ascend_sim::active_config(), Some(config.clone()));

    // The same machine again, and the plain constructor: the same runtime.
    assert!(Runtime::simulator_with(&config.clone()).is_ok());
    assert!(Runtime::simulator().is_ok());

    let other = SimConfig::new().devices(["Ascend910B4"; 4]);
    let e = Runtime::simulator_with(&other).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the simulator already runs devices [Ascend910B4 64M, Ascend310P3 32M], HCCL timeout \
         1500 ms, no faults, verbose off; a process has one simulated machine, so it cannot \
         also run devices [Ascend910B4 1024M, Ascend910B4 1024M, Ascend910B4 1024M, \
         Ascend910B4 1024M], HCCL timeout 30000 ms, no faults, verbose off (run that \
         configuration in another process)"
    );
    assert_eq!(rt.device_count().unwrap(), 2, "unchanged");
}
