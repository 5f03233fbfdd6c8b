using BenchmarkDotNet.Running;

namespace Falconet.Benchmarks.Parsing;

/// <summary>Entry point: BenchmarkDotNet arguments (e.g. <c>--filter '*' --job short</c>), or <c>--interleaved</c> for the min-of-rounds scanner check.</summary>
public static class Program
{
    /// <summary>Runs the benchmarks selected on the command line.</summary>
    public static void Main(string[] args)
    {
        if (args is ["--interleaved"])
        {
            InterleavedScanComparison.Run();
            return;
        }

        BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
    }
}
