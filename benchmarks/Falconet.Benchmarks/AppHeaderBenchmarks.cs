using System;
using BenchmarkDotNet.Attributes;
using Falconet.Http;

namespace Falconet.Benchmarks;

/// <summary>
/// One header through the parser's path (the header set's matcher, then the collection), read back, cleared: a header of
/// the default schema in the built-in set, an app's header in the app's set (benchmark.headers.json), and the same app
/// header sent to a server without the app's set, where it is unknown and lands in the fallback dictionary.
/// </summary>
[MemoryDiagnoser]
public class AppHeaderBenchmarks
{
    private static readonly byte[] s_contentType = "Content-Type"u8.ToArray();
    private static readonly byte[] s_requestId = "X-Request-Id"u8.ToArray();
    private static readonly byte[] s_json = "application/json"u8.ToArray();
    private static readonly byte[] s_id = "9f1c2a7e-53b0-4b7e-a0d1-6c2f0e8d4b11"u8.ToArray();

    private readonly RequestHeaders _builtIn = new();
    private readonly RequestHeaders<HeaderSet> _app = new();

    /// <summary>Content-Type (12 bytes) in the built-in set: the cost of a well-known header today.</summary>
    [Benchmark(Baseline = true, Description = "built-in header (Content-Type), built-in set")]
    public int BuiltInHeader()
    {
        RequestHeaders headers = _builtIn;
        headers.TryAppendMatched(RequestHeaders.IndexOf(s_contentType), s_contentType, s_json);
        int read = headers.ContentType.Count;
        headers.Clear();
        return read;
    }

    /// <summary>X-Request-Id (12 bytes) in the app's set: matched by the generated compares, value reused, read through its extension property.</summary>
    [Benchmark(Description = "app header (X-Request-Id), app's set")]
    public int AppHeader()
    {
        RequestHeaders<HeaderSet> headers = _app;
        headers.TryAppendMatched(HeaderSet.IndexOfRequestHeader(s_requestId), s_requestId, s_id);
        int read = headers.XRequestId.Count;
        headers.Clear();
        return read;
    }

    /// <summary>X-Request-Id without the app's set: an unknown name, decoded with its value into the fallback dictionary, read by name.</summary>
    [Benchmark(Description = "same header unknown (X-Request-Id), built-in set")]
    public int UnknownHeader()
    {
        RequestHeaders headers = _builtIn;
        headers.TryAppendMatched(RequestHeaders.IndexOf(s_requestId), s_requestId, s_id);
        int read = headers["X-Request-Id"].Count;
        headers.Clear();
        return read;
    }

    /// <summary>Checks once that each row does what it says: known where it should be, unknown where it should be.</summary>
    [GlobalSetup]
    public void Setup()
    {
        if (HeaderSet.IndexOfRequestHeader(s_requestId) < 0 || RequestHeaders.IndexOf(s_requestId) >= 0 || RequestHeaders.IndexOf(s_contentType) < 0)
        {
            throw new InvalidOperationException("X-Request-Id must be known to the app's set only, Content-Type to both.");
        }
    }
}
