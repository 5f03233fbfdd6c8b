using System;
using BenchmarkDotNet.Attributes;
using Falconet.Text;

namespace Falconet.Benchmarks.Parsing;

/// <summary>Scans a header block line by line (name end, then value end) with each scanner implementation.</summary>
[MemoryDiagnoser]
public class ScanBenchmarks
{
    private byte[] _block = [];

    /// <summary>Which header block to scan.</summary>
    [Params("browser", "api")]
    public string Block { get; set; } = "browser";

    /// <summary>Selects the block.</summary>
    [GlobalSetup]
    public void Setup() => _block = Block == "browser" ? HeaderBlocks.BrowserHeaders : HeaderBlocks.ApiHeaders;

    /// <summary>Hand-written Vector128/Vector256 code.</summary>
    [Benchmark]
    public int Intrinsics()
    {
        ReadOnlySpan<byte> span = _block;
        int sum = 0;
        while (span[0] != (byte)'\r')
        {
            int name = IntrinsicsHttpScanner.IndexOfNonToken(span);
            int end = name + 1 + IntrinsicsHttpScanner.IndexOfFieldValueEnd(span[(name + 1)..]);
            sum += name + end;
            span = span[(end + 2)..];
        }

        return sum;
    }

    /// <summary>SearchValues with IndexOfAnyExcept / IndexOfAny.</summary>
    [Benchmark(Baseline = true)]
    public int SearchValues()
    {
        ReadOnlySpan<byte> span = _block;
        int sum = 0;
        while (span[0] != (byte)'\r')
        {
            int name = SearchValuesHttpScanner.IndexOfNonToken(span);
            int end = name + 1 + SearchValuesHttpScanner.IndexOfFieldValueEnd(span[(name + 1)..]);
            sum += name + end;
            span = span[(end + 2)..];
        }

        return sum;
    }
}
