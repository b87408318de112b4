#pragma once
// The chapter's small hand-made data, shared by the program (main.cpp) and its tests.

#include <Eigen/Dense>
#include <string>
#include <vector>

namespace ch01 {

// Two-dimensional toy embeddings placed as in seed 004's picture: colours, speed and
// smell, furniture and animals in four quadrants.
inline const std::vector<std::string> words{"red",  "blue",     "green", "yellow", "fast",
                                            "slow", "fragrant", "table", "chair",  "dog",
                                            "cat",  "leopard",  "deer",  "horse"};

inline Eigen::MatrixXd word_embeddings() {
  Eigen::MatrixXd E(14, 2);
  // clang-format off
  E <<  1,  1,   1,  2,   2,  1,   2,  2,           // red, blue, green, yellow
       -1, -1,  -2, -1,  -2, -2,                    // fast, slow, fragrant
       -2,  1,  -1,  1,                             // table, chair
        1, -1,   2, -1,   3, -1,   2, -2,   1, -2;  // dog, cat, leopard, deer, horse
  // clang-format on
  return E;
}

// The six tokens of 今天天气很好 ("the weather is very good today"), romanised.
inline const std::vector<std::string> sentence{"jin", "tian", "tian", "qi", "hen", "hao"};

// Made-up four-dimensional embeddings for them (the seed gives none). Every row has norm
// sqrt(8), and the two "tian" are the same token, so they get the same row.
inline Eigen::MatrixXd sentence_embeddings() {
  Eigen::MatrixXd X(6, 4);
  // clang-format off
  X << 2, 0, 2,  0,   // jin  (today)
       2, 2, 0,  0,   // tian (day)
       2, 2, 0,  0,   // tian (day)
       0, 2, 0,  2,   // qi   (air, weather)
       0, 0, 2, -2,   // hen  (very)
       0, 0, 2,  2;   // hao  (good)
  // clang-format on
  return X;
}

// Seed 004's hand-written causal weight table for that sentence, as printed there.
inline Eigen::MatrixXd seed_weight_table() {
  Eigen::MatrixXd W(6, 6);
  // clang-format off
  W << 1,    0,    0,    0,    0,    0,
       0.5,  0.5,  0,    0,    0,    0,
       0.25, 0.25, 0.5,  0,    0,    0,
       0.1,  0.2,  0.3,  0.4,  0,    0,
       0.05, 0.1,  0.25, 0.27, 0.33, 0,
       0.05, 0.05, 0.1,  0.2,  0.3,  0.5;
  // clang-format on
  return W;
}

}  // namespace ch01
