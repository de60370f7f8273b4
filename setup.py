"""Builds the spmvjit Python package through the project's CMake build (see pyproject.toml).

build_ext configures CMake (tools and tests off, the Python module on, this interpreter), builds
it in a persistent folder (build-python/, or $SPMVJIT_PYTHON_BUILD_DIR: incremental rebuilds and
ccache hits), installs it into a staging prefix laid out as the package (library, LLVM plugin and
extension side by side; the extension's RPATH is $ORIGIN) and copies the shared objects into the
package. The pure-Python files come from python/spmvjit as usual.
"""

import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("SPMVJIT_PYTHON_BUILD_DIR", os.path.join(ROOT, "build-python"))


def project_version():
    text = open(os.path.join(ROOT, "CMakeLists.txt")).read()
    return re.search(r"project\(spmvjit VERSION ([0-9.]+)", text).group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        cmake_dir = os.path.join(BUILD, "cmake")
        stage = os.path.join(BUILD, "stage")
        args = ["-S", ROOT, "-B", cmake_dir, "-DCMAKE_BUILD_TYPE=Release", "-DSPMVJIT_BUILD_TESTS=OFF",
                "-DSPMVJIT_BUILD_TOOLS=OFF", "-DSPMVJIT_WITH_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}",
                f"-DCMAKE_INSTALL_PREFIX={stage}", "-DCMAKE_INSTALL_LIBDIR=spmvjit", "-DSPMVJIT_PYTHON_INSTALL_DIR=."]
        if shutil.which("ninja"):
            args += ["-G", "Ninja"]
        try:
            import pybind11
            args.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
        except ImportError:
            pass  # a system pybind11 (Debian: pybind11-dev) is found by CMake itself
        args += os.environ.get("SPMVJIT_CMAKE_ARGS", "").split()
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        subprocess.check_call(["cmake"] + args)
        subprocess.check_call(["cmake", "--build", cmake_dir, "-j", jobs])
        shutil.rmtree(stage, ignore_errors=True)
        subprocess.check_call(["cmake", "--install", cmake_dir, "--prefix", stage])
        out_dir = os.path.dirname(os.path.abspath(self.get_ext_fullpath(ext.name)))
        os.makedirs(out_dir, exist_ok=True)
        staged = os.path.join(stage, "spmvjit")
        for name in os.listdir(staged):
            # the extension, libspmvjit.so.<major> (its DT_NEEDED name) and the LLVM plugin
            if name.startswith("_spmvjit.") or re.fullmatch(r"libspmvjit\.so\.\d+|libspmvjit_llvm\.so", name):
                shutil.copyfile(os.path.join(staged, name), os.path.join(out_dir, name))


setup(
    version=project_version(),
    packages=["spmvjit"],
    package_dir={"spmvjit": "python/spmvjit"},
    ext_modules=[Extension("spmvjit._spmvjit", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": os.path.join(os.path.relpath(BUILD, ROOT), "setuptools")}},
    zip_safe=False,
)
