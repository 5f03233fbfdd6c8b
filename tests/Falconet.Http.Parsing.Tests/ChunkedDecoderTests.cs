using System;
using System.Buffers;
using System.Linq;
using System.Security.Cryptography;
using System.Text;
using Falconet.Http.Http1;
using Falconet.Http.Parsing.Tests.Support;
using Shouldly;

namespace Falconet.Http.Parsing.Tests;

/// <summary>The chunked decoder on random bodies, split at random boundaries, and at its edges.</summary>
public sealed class ChunkedDecoderTests
{
    private static readonly HttpLimits s_largeBodies = new() { MaxRequestBodySize = 8 * 1024 * 1024 };

    [Theory]
    [InlineData(0, 1)]
    [InlineData(1, 2)]
    [InlineData(4095, 3)]
    [InlineData(65_553, 4)]
    [InlineData(1_048_576, 5)]
    [InlineData(5 * 1_048_576 + 13, 6)]
    public void Decode_restores_a_random_body_split_at_random_boundaries(int size, int seed)
    {
        var random = new Random(seed);
        byte[] body = new byte[size];
        random.NextBytes(body);
        byte[] encoded = ChunkedBodies.Encode(body, random, maxChunk: Math.Max(1, size / 7));
        byte[][] pieces = Segments.RandomPieces(encoded, random, maxPiece: 20_000);

        byte[] decoded = ChunkedBodies.DecodeAtOnce(pieces, random, maxDestination: 50_000, s_largeBodies);

        SHA256.HashData(decoded).ShouldBe(SHA256.HashData(body));
    }

    [Fact]
    public void Decode_restores_a_body_received_in_random_reads()
    {
        var random = new Random(11);
        byte[] body = new byte[300_000];
        random.NextBytes(body);
        byte[] encoded = ChunkedBodies.Encode(body, random, maxChunk: 5000);

        byte[] decoded = ChunkedBodies.DecodeIncrementally(Segments.RandomPieces(encoded, random, 3000), 4096, s_largeBodies);

        SHA256.HashData(decoded).ShouldBe(SHA256.HashData(body));
    }

    [Fact]
    public void Decode_works_one_byte_at_a_time_into_a_one_byte_destination()
    {
        var random = new Random(12);
        byte[] body = new byte[3000];
        random.NextBytes(body);
        byte[] encoded = ChunkedBodies.Encode(body, random, maxChunk: 40);

        ChunkedBodies.DecodeIncrementally(Segments.OneByteEach(encoded), 1, s_largeBodies).ShouldBe(body);
        ChunkedBodies.DecodeAtOnce(Segments.OneByteEach(encoded), random, 1, s_largeBodies).ShouldBe(body);
    }

    [Fact]
    public void Decode_hands_trailers_to_the_handler()
    {
        var record = new RequestRecord();
        var trailers = new RecordingHandler(record, "trailer ");
        var decoder = default(ChunkedDecoder);
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>("3\r\nabc\r\n0\r\nExpires: never\r\n\r\n"u8.ToArray()));
        byte[] destination = new byte[16];

        int written = decoder.Decode(ref trailers, ref reader, destination, HttpLimits.Default, out bool completed);

        completed.ShouldBeTrue();
        Encoding.ASCII.GetString(destination, 0, written).ShouldBe("abc");
        record.Log.ShouldBe(["trailer [Expires]=[never]", "trailer end of headers"]);
        decoder.TotalSize.ShouldBe(3);
    }

    [Fact]
    public void Decode_stops_at_the_end_of_the_body_and_stays_completed()
    {
        var decoder = default(ChunkedDecoder);
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>("1\r\nx\r\n0\r\n\r\nGET / HTTP/1.1\r\n"u8.ToArray()));
        byte[] destination = new byte[8];

        decoder.Decode(ref reader, destination, HttpLimits.Default, out bool completed).ShouldBe(1);
        completed.ShouldBeTrue();
        reader.Consumed.ShouldBe(11);
        decoder.Decode(ref reader, destination, HttpLimits.Default, out completed).ShouldBe(0);
        completed.ShouldBeTrue();
        reader.Consumed.ShouldBe(11);
    }

    [Fact]
    public void Reset_prepares_the_decoder_for_the_next_body()
    {
        var decoder = default(ChunkedDecoder);
        byte[] destination = new byte[8];
        var first = new SequenceReader<byte>(new ReadOnlySequence<byte>("2\r\nab\r\n0\r\n\r\n"u8.ToArray()));
        decoder.Decode(ref first, destination, HttpLimits.Default, out _);

        decoder.Reset();
        var second = new SequenceReader<byte>(new ReadOnlySequence<byte>("1\r\nz\r\n0\r\n\r\n"u8.ToArray()));
        int written = decoder.Decode(ref second, destination, HttpLimits.Default, out bool completed);

        completed.ShouldBeTrue();
        destination[0].ShouldBe((byte)'z');
        written.ShouldBe(1);
        decoder.TotalSize.ShouldBe(1);
    }

    [Fact]
    public void Decode_accepts_a_body_of_exactly_the_limit_and_answers_413_one_byte_over()
    {
        var limits = new HttpLimits { MaxRequestBodySize = 10 };

        Outcome("4\r\nabcd\r\n6\r\nefghij\r\n0\r\n\r\n", limits).ShouldBe("completed");
        Outcome("4\r\nabcd\r\n7\r\nefghijk\r\n0\r\n\r\n", limits).ShouldBe(nameof(RequestRejectionReason.BodyTooLarge));
    }

    [Fact]
    public void Decode_answers_413_before_reading_the_data_of_an_oversized_chunk()
    {
        Outcome("7FFFFFFFFFFFFFFF\r\n", HttpLimits.Default).ShouldBe(nameof(RequestRejectionReason.BodyTooLarge));
    }

    [Fact]
    public void Decode_accepts_a_chunk_extension_of_exactly_the_limit()
    {
        var limits = new HttpLimits { MaxChunkExtensionSize = 8 };

        Outcome("1;abcdefg\r\nx\r\n0\r\n\r\n", limits).ShouldBe("completed");
        Outcome("1;abcdefgh\r\nx\r\n0\r\n\r\n", limits).ShouldBe(nameof(RequestRejectionReason.ChunkExtensionTooLong));
    }

    [Fact]
    public void Decode_answers_413_for_the_largest_chunk_size_and_400_past_it()
    {
        Outcome("7fffffffffffffff\r\n", HttpLimits.Default).ShouldBe(nameof(RequestRejectionReason.BodyTooLarge));
        Outcome("8000000000000000\r\n", HttpLimits.Default).ShouldBe(nameof(RequestRejectionReason.ChunkSizeOverflow));
    }

    /// <summary>Decodes a whole chunked body: "completed", "incomplete", or the reason it was refused for.</summary>
    private static string Outcome(string encoded, HttpLimits limits)
    {
        var decoder = default(ChunkedDecoder);
        var reader = new SequenceReader<byte>(new ReadOnlySequence<byte>(Encoding.ASCII.GetBytes(encoded)));
        byte[] destination = new byte[64];
        try
        {
            bool completed;
            int written;
            do
            {
                written = decoder.Decode(ref reader, destination, limits, out completed);
            }
            while (!completed && written > 0);

            return completed ? "completed" : "incomplete";
        }
        catch (BadHttpRequestException e)
        {
            return e.Reason.ToString();
        }
    }
}
