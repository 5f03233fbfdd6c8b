using BenchmarkDotNet.Running;

namespace Falconet.Benchmarks;

/// <summary>Entry point: BenchmarkDotNet arguments (e.g. <c>--filter '*' --job short</c>), or <c>--interleaved</c> for the alternating-rounds cycle check.</summary>
public static class Program
{
    /// <summary>Runs the benchmarks selected on the command line.</summary>
    public static void Main(string[] args)
    {
        if (args is ["--interleaved"])
        {
            InterleavedCycleComparison.Run();
            return;
        }

        BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
    }
}
