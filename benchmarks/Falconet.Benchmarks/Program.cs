using BenchmarkDotNet.Running;

namespace Falconet.Benchmarks;

/// <summary>
/// Entry point: BenchmarkDotNet arguments (e.g. <c>--filter '*' --job short</c>), <c>--interleaved</c> for the
/// alternating-rounds cycle check, <c>--tls-records</c> for the TLS record-size comparison, or <c>--dispatch</c> to run the three matcher dispatches of
/// <see cref="HeaderSetDispatchBenchmarks"/> (with <c>DOTNET_TieredCompilation=0 DOTNET_JitDisasm='TryParseHeaders OnHeader'</c>
/// it prints the optimized code each one gets), or <c>--http2-loop STREAMS SECONDS</c> / <c>--http2-loop-count STREAMS WARMUP MEASURED</c>
/// for the in-memory HTTP/2 connection (<see cref="Http2ConnectionLoopBenchmarks"/>).
/// </summary>
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

        if (args is ["--tls-records"])
        {
            TlsRecordSizeComparison.Run();
            return;
        }

        if (args is ["--http2-loop", string loopStreams, string loopSeconds])
        {
            Http2ConnectionLoopBenchmarks.RunRounds(int.Parse(loopStreams, System.Globalization.CultureInfo.InvariantCulture),
                double.Parse(loopSeconds, System.Globalization.CultureInfo.InvariantCulture));
            return;
        }

        if (args is ["--http2-loop-count", string countStreams, string loopWarmUp, string loopMeasured])
        {
            Http2ConnectionLoopBenchmarks.RunCounted(int.Parse(countStreams, System.Globalization.CultureInfo.InvariantCulture),
                int.Parse(loopWarmUp, System.Globalization.CultureInfo.InvariantCulture), int.Parse(loopMeasured, System.Globalization.CultureInfo.InvariantCulture));
            return;
        }

        if (args is ["--connection-loop", string depth, string path, string seconds])
        {
            ConnectionLoopBenchmarks.RunRounds(int.Parse(depth, System.Globalization.CultureInfo.InvariantCulture), path,
                double.Parse(seconds, System.Globalization.CultureInfo.InvariantCulture));
            return;
        }

        if (args is ["--connection-loop-count", string countedDepth, string countedPath, string warmUp, string measured, .. string[] variant]
            && variant is [] or ["cookie"])
        {
            ConnectionLoopBenchmarks.RunCounted(int.Parse(countedDepth, System.Globalization.CultureInfo.InvariantCulture), countedPath,
                int.Parse(warmUp, System.Globalization.CultureInfo.InvariantCulture), int.Parse(measured, System.Globalization.CultureInfo.InvariantCulture),
                rotatingCookie: variant is ["cookie"]);
            return;
        }

        if (args is ["--dispatch"])
        {
            HeaderSetDispatchBenchmarks.RunUntilOptimized();
            return;
        }

        BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
    }
}
