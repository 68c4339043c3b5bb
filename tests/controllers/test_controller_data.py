"""OpenHRP controller data files read token by token, and errors that name the file and line."""

from __future__ import annotations

import numpy as np
import pytest
from controller_helpers import MODELS

from hrpsim.errors import ConfigError
from hrpsim.motion_data import read_gains, read_motion

SAMPLE = MODELS / "openhrp3" / "controller" / "SampleController" / "etc"
PA10 = MODELS / "openhrp3" / "controller" / "PA10Controller" / "etc"


def test_sample_pos_starts_at_1_5_s_with_29_columns_in_joint_id_order():
    motion = read_motion(SAMPLE / "Sample.pos", joints=29)
    assert len(motion.times) == 4451 and motion.start == 1.5 and motion.end == pytest.approx(10.4)
    assert motion.dt == pytest.approx(0.002)
    assert motion.values[0, 0] == -7.779e-05  # written "-7.779e-005"
    assert motion.values[0, 3] == 0.832038  # RLEG_KNEE (jointId 3)


def test_pa10_angles_are_tab_separated_with_trailing_tabs():
    motion = read_motion(PA10 / "angle.dat", joints=9)
    assert len(motion.times) == 9812 and motion.start == pytest.approx(0.001)
    np.testing.assert_array_equal(motion.values[0], [0, 0.8, 0, 0.8, 0, 0.8, 1.57, -0.02, 0.02])


def test_gain_files_skip_blank_lines():
    p, d = read_gains(SAMPLE / "SR_PDgain.dat", joints=29)
    assert p[11] == 80 and d[11] == 1 and p[26] == 30000  # wrist joints are soft; WAIST_P is stiff
    p, d = read_gains(PA10 / "PDgain.dat", joints=9)
    assert list(p[-2:]) == [17000, 17000] and d[0] == 400


def test_row_lookup_clamps_to_the_table():
    motion = read_motion(SAMPLE / "Sample.pos", joints=29)
    assert motion.row_at(0.0) == 0 and motion.row_at(99.0) == 4450 and motion.row_at(1.5041) == 2


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("0.1 1 2\n0.2 1 x2\n", ":2: 'x2' is not a number"),
        ("0.1 1 2\n\n0.2 1\n", ":3: 2 values, expected 3"),
        ("0.2 1 2\n0.1 1 2\n", "time does not increase"),
        ("\n\n", "no data rows"),
    ],
)
def test_bad_rows_name_the_file_and_line(tmp_path, text, where):
    path = tmp_path / "bad.pos"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        read_motion(path, joints=2 if "expected 3" in where else None)
    assert str(path) in str(err.value) and where in str(err.value)


def test_gain_count_must_match_the_joints(tmp_path):
    path = tmp_path / "gains.dat"
    path.write_text("1 2\n\n3 4\n")
    with pytest.raises(ConfigError, match="2 gain pairs, expected 3"):
        read_gains(path, joints=3)
