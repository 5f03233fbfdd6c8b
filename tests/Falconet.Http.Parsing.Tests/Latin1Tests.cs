using System;
using System.Text;
using Falconet.Text;
using Shouldly;

namespace Falconet.Http.Parsing.Tests;

/// <summary>The widening compare the header collections use to reuse the previous request's value strings.</summary>
public sealed class Latin1Tests
{
    [Fact]
    public void Bytes_equal_the_string_they_decode_to_at_every_length_obs_text_included()
    {
        for (int length = 0; length <= 200; length++)
        {
            byte[] bytes = Bytes(length);

            Latin1.Equals(bytes, Encoding.Latin1.GetString(bytes)).ShouldBeTrue($"length {length}");
        }
    }

    [Fact]
    public void A_difference_at_any_position_of_any_length_makes_them_unequal()
    {
        for (int length = 1; length <= 200; length++)
        {
            byte[] bytes = Bytes(length);
            for (int position = 0; position < length; position++)
            {
                char[] chars = Encoding.Latin1.GetString(bytes).ToCharArray();

                chars[position] = (char)(bytes[position] ^ 0x01);
                Latin1.Equals(bytes, chars).ShouldBeFalse($"byte changed at {position} of {length}");

                // Same low byte, a char no byte decodes to.
                chars[position] = (char)(bytes[position] | 0x100);
                Latin1.Equals(bytes, chars).ShouldBeFalse($"char above U+00FF at {position} of {length}");
            }
        }
    }

    private static byte[] Bytes(int length)
    {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++)
        {
            bytes[i] = (byte)(i % 7 == 3 ? 0xE9 : 'a' + (i % 26));
        }

        return bytes;
    }
}
