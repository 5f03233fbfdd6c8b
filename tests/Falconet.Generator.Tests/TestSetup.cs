using System;
using System.Runtime.CompilerServices;

namespace Falconet.Generator.Tests;

/// <summary>Process-wide settings of the test assembly.</summary>
internal static class TestSetup
{
    /// <summary>Snapshot mismatches are reported as test failures only; no diff tool is ever launched.</summary>
    [ModuleInitializer]
    internal static void DisableDiffTools() => Environment.SetEnvironmentVariable("DiffEngine_Disabled", "true");
}
