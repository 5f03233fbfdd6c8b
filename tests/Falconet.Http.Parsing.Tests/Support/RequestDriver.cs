using System;
using System.Buffers;
using System.Collections.Generic;
using Falconet.Http.Http1;

namespace Falconet.Http.Parsing.Tests.Support;

/// <summary>
/// Drives the parser the way a connection does: bytes arrive in batches, each call sees everything received and
/// not yet consumed, and a call that needs more data is retried after the next arrival.
/// </summary>
internal static class RequestDriver
{
    /// <summary>Parses one request (line, headers, framing, body) from the given arrivals; returns its transcript.</summary>
    /// <param name="arrivals">Each arrival is a batch of segments appended to what was received before.</param>
    /// <param name="destinationSize">Size of the buffer chunked bodies are decoded into.</param>
    public static string Run(IEnumerable<byte[][]> arrivals, HttpLimits? limits = null, int destinationSize = 7)
        => Run(new SegmentInput(), arrivals, limits, destinationSize);

    /// <summary>Parses one request from what <paramref name="input"/> already holds and the given arrivals appended to it.</summary>
    /// <remarks>The input keeps what the request did not consume (a pipelined request), so a second call parses the next one.</remarks>
    public static string Run(IReceivedInput input, IEnumerable<byte[][]> arrivals, HttpLimits? limits = null, int destinationSize = 7)
    {
        limits ??= HttpLimits.Default;
        var record = new RequestRecord();
        var handler = new RecordingHandler(record);
        var trailers = new RecordingHandler(record, "trailer ");
        var body = new List<byte>();
        var headerState = default(HeaderParseState);
        var decoder = default(ChunkedDecoder);
        var destination = new byte[destinationSize];
        long bodyRemaining = 0;
        var stage = Stage.RequestLine;
        RequestBodyKind kind = RequestBodyKind.None;

        try
        {
            foreach (byte[][] arrival in arrivals)
            {
                input.Append(arrival);
                var reader = new SequenceReader<byte>(input.GetUnconsumed());
                bool progress = true;
                while (progress && stage != Stage.Done)
                {
                    switch (stage)
                    {
                        case Stage.RequestLine:
                            progress = Http1Parser.TryParseRequestLine(ref handler, ref reader, limits);
                            if (progress)
                            {
                                stage = Stage.Headers;
                            }

                            break;

                        case Stage.Headers:
                            progress = Http1Parser.TryParseHeaders(ref handler, ref reader, limits, ref headerState);
                            if (progress)
                            {
                                kind = RequestFraming.Determine(record.Headers, record.Version, limits, out bodyRemaining);
                                record.Log.Add($"body {kind} {bodyRemaining}");
                                stage = kind == RequestBodyKind.None ? Stage.Done : Stage.Body;
                            }

                            break;

                        case Stage.Body when kind == RequestBodyKind.ContentLength:
                            int take = (int)Math.Min(reader.Remaining, bodyRemaining);
                            body.AddRange(reader.UnreadSequence.Slice(0, take).ToArray());
                            reader.Advance(take);
                            bodyRemaining -= take;
                            progress = take > 0;
                            if (bodyRemaining == 0)
                            {
                                stage = Stage.Done;
                            }

                            break;

                        case Stage.Body:
                            int written = decoder.Decode(ref trailers, ref reader, destination, limits, out bool completed);
                            body.AddRange(destination.AsSpan(0, written).ToArray());
                            progress = written > 0 || completed;
                            if (completed)
                            {
                                stage = Stage.Done;
                            }

                            break;
                    }
                }

                input.Consume(reader.Position);
            }
        }
        catch (BadHttpRequestException e)
        {
            record.Log.Add($"rejected {e.StatusCode} {e.Reason}");
            return string.Join("\n", record.Log);
        }

        if (stage != Stage.Done)
        {
            record.Log.Add("incomplete");
        }
        else
        {
            record.Log.Add($"body [{RequestRecord.Text(body.ToArray())}]");
            long left = input.Buffered;
            if (left > 0)
            {
                record.Log.Add($"left {left}");
            }
        }

        return string.Join("\n", record.Log);
    }

    /// <summary>The whole request in one segment, received at once.</summary>
    public static string RunWhole(byte[] request, HttpLimits? limits = null) => Run([[request]], limits);

    private enum Stage
    {
        RequestLine,
        Headers,
        Body,
        Done,
    }
}
