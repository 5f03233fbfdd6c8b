using System.Globalization;
using BenchmarkDotNet.Running;

namespace Falconet.Benchmarks.Parsing;

/// <summary>Entry point: BenchmarkDotNet arguments (e.g. <c>--filter '*' --job short</c>), <c>--interleaved</c> for the min-of-rounds comparisons, or
/// <c>--loop VARIANT REQUEST SEGMENTS SECONDS</c> to run one parser comparison method alone (for perf).</summary>
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

        if (args is ["--decompose"])
        {
            InterleavedScanComparison.Decompose();
            return;
        }

        if (args is ["--loop", string variant, string request, string segments, string seconds])
        {
            KestrelParserComparison.Loop(variant, request, int.Parse(segments, CultureInfo.InvariantCulture), double.Parse(seconds, CultureInfo.InvariantCulture));
            return;
        }

        BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
    }
}
