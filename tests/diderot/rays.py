"""The ray programs and volumes of the strand-block tests (test_strands_lanes3d,
test_strand_ray_skip, test_strand_ray_max): one place for their texts, as mip's and dvr's
rays in small (the folder is on the path, not a package: ``from rays import RAYS``)."""

from __future__ import annotations

import numpy as np

from tensorlang.sampling.image import Image

# rays through the volume (as mip and dvr): a tent maximum and a bspln3 value and gradient
# at each step, opacity accumulated, the ray stopped at the far end or when opaque; the
# rays start at different depths so that a block's neighbours finish at different steps
RAYS = """#version 1.0
input image(3)[] vol;
field#0(3)[] T = tent ⊛ vol;
field#2(3)[] F = bspln3 ⊛ vol;
strand ray (int ui, int vi) {
   vec3 dir = normalize([1.0, 0.23 * real(ui) - 0.8, 0.19 * real(vi) - 0.7]);
   real t = -0.2 * real((ui + vi) % 3);
   output real m = -1;
   output vec3 g = [0, 0, 0];  // at the last sample inside
   output real tr = 1;
   update {
      if (t > 4.5) { stabilize; }
      vec3 p = [-2.2, 0.1, -0.3] + t * dir;
      t += 0.17;
      if (inside(p, T)) { m = max(m, T(p)); }
      if (inside(p, F)) {
         real v = F(p);
         g = ∇F(p);
         tr *= 1 - clamp(0, 1, |v| * 0.02);
         if (tr < 0.2) { stabilize; }
      }
   }
}
initially [ ray(ui, vi) | vi in 0..8, ui in 0..10 ];
"""


def march(field: str, outputs: str, body: str) -> str:
    """Rays marching forwards (even ui) and backwards (odd ui) through, past or beside the
    volume of :func:`volume` (spacing ``MARCH_SPACING``) until ``t`` leaves [-4, far]:
    ``field`` declares ``F``, ``outputs`` the ray's outputs, ``body`` the rest of its
    update after the exit test and ``vec3 p``, the ray's point."""
    return f"""#version 1.0
input image(3)[] vol;
input real far = 6.5;
{field}
strand ray (int ui, int vi) {{
   vec3 dir = normalize([1.0, 0.5 * real(ui) - 3.0, 0.19 * real(vi) - 0.9]);
   real dt = 0.07 if ui % 2 == 0 else -0.09;
   real t = -1.5 - 0.2 * real((ui + vi) % 3) if ui % 2 == 0 else 4.0 + 0.1 * real(vi);
{outputs}
   update {{
      if (t > far || t < -4.0) {{ stabilize; }}
      vec3 p = [-4.0, 0.1, -0.3] + t * dir;
{body}
   }}
}}
initially [ ray(ui, vi) | vi in 0..8, ui in 0..12 ];
"""


# a bspln3 value and gradient where inside, the ray stopped when bright enough (the ray-skip
# tests: the steps outside the volume skipped)
MARCH = march("field#2(3)[] F = bspln3 ⊛ vol;", "   output real m = -1;\n   output vec3 g = [0, 0, 0];", """\
      t += dt;
      if (inside(p, F)) {
         real v = F(p);
         g = ∇F(p);
         m = max(m, v);
         if (m > 2.5) { stabilize; }
      }""")

# the largest value met (the ray-max tests: the steps that leave it as it is skipped), the
# kernel (KERNEL) and the start of m (START) filled in by the tests
MIP = march("field#0(3)[] F = KERNEL ⊛ vol;", "   output real m = START;", """\
      if (inside(p, F)) {
         m = max(m, F(p));
      }
      t += dt;""")

#: index-to-world spacings: the volumes of RAYS (test_strands_lanes3d), of the marching rays
#: through a larger volume (test_strand_ray_max)
RAYS_SPACING, MARCH_SPACING = (0.42, 0.4, 0.45), (0.22, 0.2, 0.25)


def volume(data: np.ndarray, layout: str, axes: bool = False, spacing=RAYS_SPACING) -> Image:
    """``data`` as a 3-D image in ``layout`` ("fortran": axis 0 contiguous, an NRRD file's
    layout; "c": numpy's own, axis 2), its index-to-world map scaled by ``spacing``, rotated
    by 0.3 about axis 2, or diagonal where ``axes`` (``tl_img.diag``)."""
    if layout == "fortran":
        data = np.asfortranarray(data)
    c, s = (1.0, 0.0) if axes else (np.cos(0.3), np.sin(0.3))
    a, b, z = spacing
    to_world = np.array([[a * c, -b * s, 0, -2.1], [a * s, b * c, 0, -1.9], [0, 0, z, -2.0], [0, 0, 0, 1]])
    return Image(data, 3, to_world)


def noisy_volume(layout: str, axes: bool = False, vox: tuple = ()) -> Image:
    """Normal noise (voxels of shape ``vox``) with ⊥ and ±inf samples that reach some probes of
    RAYS and MARCH."""
    rng = np.random.default_rng(5)
    data = rng.normal(size=(15, 13, 12) + vox)
    data[5, 4, 4] = np.nan
    data[4, 9, 6] = np.inf
    data[8, 2, 2] = -np.inf
    return volume(data, layout, axes)
