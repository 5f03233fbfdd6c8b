using System.Globalization;
using BenchmarkDotNet.Running;

namespace Falconet.Benchmarks.Parsing;

/// <summary>Entry point: BenchmarkDotNet arguments (e.g. <c>--filter '*' --job short</c>), <c>--interleaved</c> for the min-of-rounds comparisons,
/// <c>--hpack</c> for the HPACK decoders in alternating rounds, <c>--hpack-count VARIANT REQUEST N</c> to run one of them N times after a
/// warm-up (for instruction counts under callgrind: the difference between N and 0 runs), or
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

        if (args is ["--hpack"])
        {
            HPackInterleaved.Run();
            return;
        }

        if (args is ["--hpack-count", string hpackVariant, string hpackRequest, string operations])
        {
            HPackInterleaved.Count(hpackVariant, hpackRequest, int.Parse(operations, CultureInfo.InvariantCulture));
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
