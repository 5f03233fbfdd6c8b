using System.Diagnostics;
using System.Reflection;
using Falconet.Server;

namespace Falconet.Http.Tests.Infrastructure;

/// <summary>
/// A fact that measures the optimized runtime: it is skipped, with the reason shown, when the Falconet assembly
/// was built with the JIT optimizer disabled (Debug), where unoptimized code allocates on its own
/// (for example a RuntimeFieldHandle object for every span over a constant array of non-byte values).
/// </summary>
internal sealed class OptimizedRuntimeFactAttribute : FactAttribute
{
    public OptimizedRuntimeFactAttribute()
    {
        DebuggableAttribute? debuggable = typeof(FalconetServer).Assembly.GetCustomAttribute<DebuggableAttribute>();
        if (debuggable is { IsJITOptimizerDisabled: true })
        {
            Skip = "Falconet is a Debug build (JIT optimizer disabled); run with -c Release to measure allocations.";
        }
    }
}

/// <summary>The theory form of <see cref="OptimizedRuntimeFactAttribute"/>.</summary>
internal sealed class OptimizedRuntimeTheoryAttribute : TheoryAttribute
{
    public OptimizedRuntimeTheoryAttribute()
    {
        DebuggableAttribute? debuggable = typeof(FalconetServer).Assembly.GetCustomAttribute<DebuggableAttribute>();
        if (debuggable is { IsJITOptimizerDisabled: true })
        {
            Skip = "Falconet is a Debug build (JIT optimizer disabled); run with -c Release to measure allocations.";
        }
    }
}
