using System;
using System.Buffers;
using System.Text;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Diagnosers;
using Falconet.Http;
using Falconet.Http.Http1;

namespace Falconet.Benchmarks;

/// <summary>
/// Why the server is generic over a struct: the same header section parsed into an app's collection with the matcher
/// reached three ways. A struct type argument (what the server does) gets code compiled for it, with a direct call the
/// JIT may inline; a class type argument shares one compiled body among all classes, so the static call is looked up at
/// run time; a matcher object is a virtual call per header. The disassembly shows which call each one makes.
/// </summary>
[MemoryDiagnoser]
[DisassemblyDiagnoser(maxDepth: 3, exportCombinedDisassemblyReport: true)]
public class HeaderSetDispatchBenchmarks
{
    private static readonly byte[] s_section = Encoding.ASCII.GetBytes(
        "Host: www.example.com\r\n" +
        "User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0\r\n" +
        "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n" +
        "Accept-Encoding: gzip, deflate, br, zstd\r\n" +
        "Accept-Language: en-US,en;q=0.5\r\n" +
        "Connection: keep-alive\r\n" +
        "Cookie: session=8f14e45fceea167a5a36dedd4bea2543; theme=dark\r\n" +
        "X-Tenant-Id: blue\r\n" +
        "X-Request-Id: 9f1c2a7e-53b0-4b7e-a0d1-6c2f0e8d4b11\r\n" +
        "X-Api-Version: 2025-01-15\r\n" +
        "\r\n");

    private readonly RequestHeaders<HeaderSet> _headers = new();
    private readonly HeaderMatcher _matcher = new AppHeaderMatcher();

    /// <summary>The server's way: the handler is generic over the header set's struct.</summary>
    [Benchmark(Baseline = true, Description = "struct type argument (the server)")]
    public int StructTypeArgument()
    {
        var handler = new GenericHandler<HeaderSet>(_headers);
        return Parse(ref handler);
    }

    /// <summary>The same generic handler over a class that implements the set: shared generic code.</summary>
    [Benchmark(Description = "class type argument (shared generic code)")]
    public int ClassTypeArgument()
    {
        var handler = new GenericHandler<HeaderSetClass>(_headers);
        return Parse(ref handler);
    }

    /// <summary>The matcher behind an abstract class: a virtual call per header.</summary>
    [Benchmark(Description = "matcher object (virtual call)")]
    public int VirtualCall()
    {
        var handler = new VirtualHandler(_headers, _matcher);
        return Parse(ref handler);
    }

    /// <summary>Runs every variant many times, pausing so background tiered compilation keeps up; prints what they parsed.</summary>
    public static void RunUntilOptimized()
    {
        var benchmarks = new HeaderSetDispatchBenchmarks();
        long counts = 0;
        for (int round = 0; round < 10; round++)
        {
            for (int i = 0; i < 50_000; i++)
            {
                counts += benchmarks.StructTypeArgument() + benchmarks.ClassTypeArgument() + benchmarks.VirtualCall();
            }

            // Tiered compilation promotes methods on a background thread: give it time between rounds.
            System.Threading.Thread.Sleep(100);
        }

        Console.WriteLine("headers parsed per variant and run: " + (counts / 1_500_000));
    }

    private int Parse<THandler>(ref THandler handler)
        where THandler : struct, IHttpHeadersHandler
    {
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(s_section));
        var state = default(HeaderParseState);
        if (!Http1Parser.TryParseHeaders(ref handler, ref reader, HttpLimits.Default, ref state))
        {
            throw new InvalidOperationException("The header section did not parse.");
        }

        int count = _headers.Count;
        _headers.Clear();
        return count;
    }

    /// <summary>What the server's handler does with a header, generic over where the matcher comes from.</summary>
    private readonly struct GenericHandler<TSet>(RequestHeaders headers) : IHttpHeadersHandler
        where TSet : IHeaderSet
    {
        public bool OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
            => headers.TryAppendMatched(TSet.IndexOfRequestHeader(name), name, value);

        public void OnHeadersComplete()
        {
        }
    }

    private readonly struct VirtualHandler(RequestHeaders headers, HeaderMatcher matcher) : IHttpHeadersHandler
    {
        public bool OnHeader(ReadOnlySpan<byte> name, ReadOnlySpan<byte> value)
            => headers.TryAppendMatched(matcher.IndexOf(name), name, value);

        public void OnHeadersComplete()
        {
        }
    }

    /// <summary>The app's set implemented on a class, so that a generic type argument is a reference type.</summary>
    private sealed class HeaderSetClass : IHeaderSet
    {
        public static HeaderTable RequestHeaderTable => HeaderSet.RequestHeaderTable;

        public static HeaderTable ResponseHeaderTable => HeaderSet.ResponseHeaderTable;

        public static int IndexOfRequestHeader(ReadOnlySpan<byte> name) => HeaderSet.IndexOfRequestHeader(name);
    }

    private abstract class HeaderMatcher
    {
        public abstract int IndexOf(ReadOnlySpan<byte> name);
    }

    private sealed class AppHeaderMatcher : HeaderMatcher
    {
        public override int IndexOf(ReadOnlySpan<byte> name) => HeaderSet.IndexOfRequestHeader(name);
    }
}
