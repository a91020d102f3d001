"""The judge as a measuring instrument: control cases, calibration, fitted parameters."""
